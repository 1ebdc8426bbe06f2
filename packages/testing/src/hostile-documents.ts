import AdmZip from "adm-zip";
import * as CFB from "cfb";
import { escapeXml } from "./office-factory.ts";

/**
 * Office documents built to hurt a reader, assembled part by part here (zip and compound-file
 * containers written by adm-zip and cfb), so each is exactly the attack its name says: macros,
 * linked images, passwords, zip bombs, nesting, containers of another kind. Used by the
 * office-converter package's tests and by the end-to-end hostile-files suite. Plain documents to
 * start from come from office-factory.ts (written by LibreOffice itself).
 */

export interface ZipPart {
  name: string;
  data: string | Buffer;
}

/** A zip with its parts in order, the first (an ODF mimetype) stored, the rest deflated. */
export function zipOf(parts: ZipPart[]): Buffer {
  const zip = new AdmZip(undefined, { noSort: true });
  for (const part of parts)
    zip.addFile(part.name, Buffer.isBuffer(part.data) ? part.data : Buffer.from(part.data));
  const stored = zip.getEntry("mimetype");
  if (stored) stored.header.method = 0;
  return zip.toBuffer();
}

const ODT_MIME = "application/vnd.oasis.opendocument.text";

const odfManifest = (mediaType: string, paths: string[], encrypted = false) =>
  `<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.3"><manifest:file-entry manifest:full-path="/" manifest:media-type="${mediaType}"/>${paths
    .map(
      (path) =>
        `<manifest:file-entry manifest:full-path="${path}" manifest:media-type="text/xml">${
          encrypted
            ? `<manifest:encryption-data manifest:checksum-type="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0#sha256-1k" manifest:checksum="AAAA"><manifest:algorithm manifest:algorithm-name="http://www.w3.org/2001/04/xmlenc#aes256-cbc" manifest:initialisation-vector="AAAA"/></manifest:encryption-data>`
            : ""
        }</manifest:file-entry>`,
    )
    .join("")}</manifest:manifest>`;

/**
 * An ODT saying `text`, whose Basic macro, bound to the document's load event, writes
 * `markerPath`: what a hostile document would do on opening.
 */
export function odtWithLoadMacro(markerPath: string, text: string): Buffer {
  const content = `<?xml version="1.0" encoding="UTF-8"?><office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:script="urn:oasis:names:tc:opendocument:xmlns:script:1.0" xmlns:xlink="http://www.w3.org/1999/xlink" office:version="1.3"><office:scripts><office:event-listeners><script:event-listener script:language="ooo:script" script:event-name="dom:load" xlink:href="vnd.sun.star.script:Standard.Module1.OnOpen?language=Basic&amp;location=document" xlink:type="simple"/></office:event-listeners></office:scripts><office:body><office:text><text:p>${escapeXml(text)}</text:p></office:text></office:body></office:document-content>`;
  const module = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE script:module PUBLIC "-//OpenOffice.org//DTD OfficeDocument 1.0//EN" "module.dtd">
<script:module xmlns:script="http://openoffice.org/2000/script" script:name="Module1" script:language="StarBasic">${escapeXml(`Sub OnOpen
  Dim n As Integer
  n = FreeFile
  Open "${markerPath}" For Output As #n
  Print #n, "the macro ran"
  Close #n
End Sub
`)}</script:module>`;
  return zipOf([
    { name: "mimetype", data: ODT_MIME },
    { name: "content.xml", data: content },
    { name: "Basic/Standard/Module1.xml", data: module },
    {
      name: "Basic/Standard/script-lb.xml",
      data: `<?xml version="1.0" encoding="UTF-8"?><!DOCTYPE library:library PUBLIC "-//OpenOffice.org//DTD OfficeDocument 1.0//EN" "library.dtd"><library:library xmlns:library="http://openoffice.org/2000/library" library:name="Standard" library:readonly="false" library:passwordprotected="false"><library:element library:name="Module1"/></library:library>`,
    },
    {
      name: "Basic/script-lc.xml",
      data: `<?xml version="1.0" encoding="UTF-8"?><!DOCTYPE library:libraries PUBLIC "-//OpenOffice.org//DTD OfficeDocument 1.0//EN" "libraries.dtd"><library:libraries xmlns:library="http://openoffice.org/2000/library" xmlns:xlink="http://www.w3.org/1999/xlink"><library:library library:name="Standard" library:link="false"/></library:libraries>`,
    },
    {
      name: "META-INF/manifest.xml",
      data: odfManifest(ODT_MIME, [
        "content.xml",
        "Basic/Standard/Module1.xml",
        "Basic/Standard/script-lb.xml",
        "Basic/script-lc.xml",
      ]),
    },
  ]);
}

/** An ODT saying `text` and showing an image that is linked (not embedded) from `url`. */
export function odtLinkingImage(url: string, text: string): Buffer {
  const content = `<?xml version="1.0" encoding="UTF-8"?><office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" xmlns:xlink="http://www.w3.org/1999/xlink" office:version="1.3"><office:body><office:text><text:p>${escapeXml(text)} <draw:frame draw:name="tracker" text:anchor-type="as-char" svg:width="2cm" svg:height="2cm"><draw:image xlink:href="${escapeXml(url)}" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/></draw:frame></text:p></office:text></office:body></office:document-content>`;
  return zipOf([
    { name: "mimetype", data: ODT_MIME },
    { name: "content.xml", data: content },
    { name: "META-INF/manifest.xml", data: odfManifest(ODT_MIME, ["content.xml"]) },
  ]);
}

const RELATIONSHIPS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

/**
 * `docx` (as LibreOffice writes one) made to reach out to `baseUrl` when opened: a picture linked
 * (not embedded) from `${baseUrl}image.png`, and a template attached from `${baseUrl}template.dotm`
 * (the remote-template trick phishing documents use). Both are external relationships, so the
 * package itself holds neither.
 */
export function docxLinkingRemote(docx: Buffer, baseUrl: string): Buffer {
  const zip = new AdmZip(docx);
  const text = (name: string) => {
    const entry = zip.getEntry(name);
    if (!entry) throw new Error(`the DOCX has no ${name}`);
    return entry.getData().toString("utf8");
  };
  const picture =
    `<w:p><w:r><w:drawing><wp:inline distT="0" distB="0" distL="0" distR="0"><wp:extent cx="720000" cy="720000"/>` +
    `<wp:docPr id="900" name="tracker"/><a:graphic xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main">` +
    `<a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture">` +
    `<pic:pic xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:nvPicPr><pic:cNvPr id="900" name="tracker"/>` +
    `<pic:cNvPicPr/></pic:nvPicPr><pic:blipFill><a:blip r:link="rIdTracker"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill>` +
    `<pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="720000" cy="720000"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></pic:spPr>` +
    `</pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>`;
  const document = text("word/document.xml");
  if (!document.includes("<w:sectPr")) throw new Error("the DOCX's body has no section properties");
  zip.updateFile("word/document.xml", Buffer.from(document.replace("<w:sectPr", `${picture}<w:sectPr`)));
  zip.updateFile(
    "word/_rels/document.xml.rels",
    Buffer.from(
      text("word/_rels/document.xml.rels").replace(
        "</Relationships>",
        `<Relationship Id="rIdTracker" Type="${RELATIONSHIPS}/image" Target="${escapeXml(`${baseUrl}image.png`)}" TargetMode="External"/></Relationships>`,
      ),
    ),
  );
  zip.updateFile(
    "word/settings.xml",
    Buffer.from(
      text("word/settings.xml")
        .replace("<w:settings ", `<w:settings xmlns:r="${RELATIONSHIPS}" `)
        .replace(/(<w:settings[^>]*>)/, '$1<w:attachedTemplate r:id="rIdTemplate"/>'),
    ),
  );
  zip.addFile(
    "word/_rels/settings.xml.rels",
    Buffer.from(
      `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
        `<Relationship Id="rIdTemplate" Type="${RELATIONSHIPS}/attachedTemplate" Target="${escapeXml(`${baseUrl}template.dotm`)}" TargetMode="External"/></Relationships>`,
    ),
  );
  return zip.toBuffer();
}

/** An ODT whose manifest says its content is encrypted (as LibreOffice writes one with a password). */
export function odtDeclaredEncrypted(): Buffer {
  return zipOf([
    { name: "mimetype", data: ODT_MIME },
    { name: "content.xml", data: Buffer.from([1, 2, 3, 4]) },
    { name: "META-INF/manifest.xml", data: odfManifest(ODT_MIME, ["content.xml"], true) },
  ]);
}

/**
 * A password-protected OOXML file as Office writes one: a compound file holding EncryptionInfo and
 * EncryptedPackage (LibreOffice 7.4 does not write these from a macro, so this one is assembled
 * with the cfb library; the encrypted bytes are random, as real ones look).
 */
export function encryptedOoxml(): Buffer {
  const container = CFB.utils.cfb_new();
  CFB.utils.cfb_add(
    container,
    "/EncryptionInfo",
    Buffer.from([4, 0, 4, 0, 0x40, 0, 0, 0, ...Buffer.from("<encryption/>")]),
  );
  CFB.utils.cfb_add(container, "/EncryptedPackage", Buffer.alloc(4096, 0x5a));
  return Buffer.from(CFB.write(container, { type: "buffer" }) as Uint8Array);
}

/** A compound file that is no office document (like an MSI installer's tables). */
export function compoundFileOfAnotherKind(): Buffer {
  const container = CFB.utils.cfb_new();
  CFB.utils.cfb_add(container, "/\u4840\u3f3f\u4577\u446c\u3b6a", Buffer.alloc(512, 1));
  CFB.utils.cfb_add(container, "/SummaryInformation", Buffer.alloc(256, 2));
  return Buffer.from(CFB.write(container, { type: "buffer" }) as Uint8Array);
}

/**
 * `zip` with the unpacked size its central directory declares for `entryName` set to `size`: a
 * zip bomb's declaration without its gigabytes (the sizes are read, never the data).
 */
export function declaringUnpackedSize(zip: Buffer, entryName: string, size: number): Buffer {
  const patched = Buffer.from(zip);
  for (let at = patched.length - 22; at >= 0; at--) {
    if (patched.readUInt32LE(at) !== 0x02014b50) continue;
    const nameLength = patched.readUInt16LE(at + 28);
    if (patched.toString("utf8", at + 46, at + 46 + nameLength) !== entryName) continue;
    // Central directory and local header alike, as a bomb declares it (they agree).
    patched.writeUInt32LE(size, at + 24);
    patched.writeUInt32LE(size, patched.readUInt32LE(at + 42) + 22);
    return patched;
  }
  throw new Error(`no central directory entry ${entryName}`);
}

/** A DOCX embedding a DOCX embedding a DOCX... `depth` levels deep. */
export function nestedDocx(base: Buffer, depth: number): Buffer {
  let document = base;
  for (let level = 0; level < depth; level++) {
    const zip = new AdmZip(document);
    zip.addFile(`word/embeddings/Microsoft_Word_Document${level}.docx`, document);
    document = zip.toBuffer();
  }
  return document;
}
