import { inflateRawSync } from "node:zlib";
import { FileRejectedError } from "@locus/contracts";
// Zip and OLE (compound file) containers are read by libraries, not by hand: both formats have
// edge cases (zip64, data descriptors, sector chains, mini streams) that a hand-written parser gets
// wrong in exactly the ways a hostile file probes. adm-zip reads the central directory
// synchronously (so inspection stays a plain function) and hands out an entry's compressed bytes
// without inflating them; cfb is SheetJS's compound file reader, used by their Office parsers.
import AdmZip from "adm-zip";
import * as CFB from "cfb";

export type OfficeFormat = "docx" | "doc" | "odt" | "rtf" | "pptx" | "ppt" | "odp" | "xlsx" | "xls" | "ods";

export interface OfficeInspection {
  format: OfficeFormat;
  /** The original's MIME type, e.g. application/vnd.openxmlformats-officedocument.wordprocessingml.document, application/msword */
  mimeType: string;
  family: "text" | "presentation" | "spreadsheet";
  hasMacros: boolean;
}

export interface InspectionLimits {
  /** Most bytes the archive (with the packages embedded in it) may declare once unpacked. */
  maxUnpackedBytes: number;
  /** Most entries, over the archive and the packages embedded in it. */
  maxEntries: number;
  /** Most declared unpacked bytes per packed byte, for archives past RATIO_FLOOR_BYTES. */
  maxRatio: number;
  /** Most levels of packages embedded in packages (a document with none is level 0). */
  maxNesting: number;
}

/**
 * Office documents are mostly XML, which deflates 5-20 times; repetitive spreadsheets reach ~100.
 * A zip bomb needs ~1000 (deflate's ceiling) or nesting. 1 GiB unpacked is far beyond any text a
 * reader would index from one document and still within what LibreOffice may load.
 */
export const DEFAULT_INSPECTION_LIMITS: InspectionLimits = {
  maxUnpackedBytes: 1024 * 1024 * 1024,
  maxEntries: 10_000,
  maxRatio: 200,
  maxNesting: 3,
};

/** Below this declared total, a high ratio is a small repetitive file, not a threat. */
const RATIO_FLOOR_BYTES = 16 * 1024 * 1024;
/**
 * Most bytes an embedded package is inflated to, to read its own central directory: embedded
 * workbooks and documents are small, and one past this is not unpacked into memory at all.
 */
const MAX_EMBEDDED_PACKAGE_BYTES = 64 * 1024 * 1024;
/** Most bytes a manifest ([Content_Types].xml, META-INF/manifest.xml, mimetype) is inflated to. */
const MAX_MANIFEST_BYTES = 1024 * 1024;

const FAMILY: Record<OfficeFormat, OfficeInspection["family"]> = {
  docx: "text",
  doc: "text",
  odt: "text",
  rtf: "text",
  pptx: "presentation",
  ppt: "presentation",
  odp: "presentation",
  xlsx: "spreadsheet",
  xls: "spreadsheet",
  ods: "spreadsheet",
};

const MIME: Record<OfficeFormat, string> = {
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  doc: "application/msword",
  odt: "application/vnd.oasis.opendocument.text",
  rtf: "application/rtf",
  pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
  ppt: "application/vnd.ms-powerpoint",
  odp: "application/vnd.oasis.opendocument.presentation",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  xls: "application/vnd.ms-excel",
  ods: "application/vnd.oasis.opendocument.spreadsheet",
};

/** OOXML main-part content types (documents, templates, macro-enabled variants) by format. */
const OOXML_MAIN_PARTS: { pattern: RegExp; format: OfficeFormat; mimeType?: string }[] = [
  {
    pattern: /application\/vnd\.ms-word\.(document|template)\.macroEnabled/i,
    format: "docx",
    mimeType: "application/vnd.ms-word.document.macroEnabled.12",
  },
  { pattern: /wordprocessingml\.(document|template)\.main\+xml/i, format: "docx" },
  {
    pattern: /application\/vnd\.ms-powerpoint\.(presentation|slideshow|template)\.macroEnabled/i,
    format: "pptx",
    mimeType: "application/vnd.ms-powerpoint.presentation.macroEnabled.12",
  },
  { pattern: /presentationml\.(presentation|slideshow|template)\.main\+xml/i, format: "pptx" },
  {
    pattern: /application\/vnd\.ms-excel\.(sheet|template)\.macroEnabled/i,
    format: "xlsx",
    mimeType: "application/vnd.ms-excel.sheet.macroEnabled.12",
  },
  { pattern: /spreadsheetml\.(sheet|template)\.main\+xml/i, format: "xlsx" },
];

const ODF_MIME: Record<string, OfficeFormat> = {
  "application/vnd.oasis.opendocument.text": "odt",
  "application/vnd.oasis.opendocument.text-template": "odt",
  "application/vnd.oasis.opendocument.presentation": "odp",
  "application/vnd.oasis.opendocument.presentation-template": "odp",
  "application/vnd.oasis.opendocument.spreadsheet": "ods",
  "application/vnd.oasis.opendocument.spreadsheet-template": "ods",
};

/** Entries that may hold a package of their own (an embedded workbook, document or archive). */
const EMBEDDED_PACKAGE =
  /\.(zip|docx|docm|dotx|dotm|xlsx|xlsm|xltx|xltm|pptx|pptm|potx|potm|ppsx|ppsm|odt|ods|odp|odg|odf|ott|ots|otp|jar)$/i;

const OLE_SIGNATURE = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];

const corrupt = (what: string) =>
  new FileRejectedError(
    "document_corrupt",
    `This file ${what}, so it cannot be read as an office document. Check that it opens in an office application and upload it again, or save it as PDF.`,
  );

const tooLarge = (what: string) =>
  new FileRejectedError(
    "document_too_large",
    `This document ${what}, more than is read from one document. Split it into smaller documents, or save it as PDF, and upload that.`,
  );

const encrypted = () =>
  new FileRejectedError(
    "document_encrypted",
    "This document is protected with a password, so its text cannot be read. Remove the password (save an unprotected copy) and upload that.",
  );

const startsWith = (bytes: Uint8Array, prefix: number[]) => prefix.every((b, i) => bytes[i] === b);

/**
 * Reads the container's declared structure only (zip central directory, OLE/CFB directory, RTF
 * header): never unpacks document content beyond small manifests. Throws FileRejectedError:
 * document_too_large (zip bomb: declared unpacked total/ratio/entry count beyond limits; embedded
 * packages nested deeper than maxNesting, checking embedded zips inside zips by their declared
 * sizes), document_encrypted (OOXML in a CFB with EncryptedPackage; ODF manifest with
 * encryption-data; legacy .doc/.xls/.ppt encryption flags), document_corrupt (not a readable
 * container, or not an office document at all e.g. an MSI or a plain zip).
 */
export function inspectOfficeDocument(
  bytes: Uint8Array,
  mimeHint?: string,
  limits: InspectionLimits = DEFAULT_INSPECTION_LIMITS,
): OfficeInspection {
  if (startsWith(bytes, [0x50, 0x4b])) return inspectZip(bytes, limits);
  if (startsWith(bytes, OLE_SIGNATURE)) return inspectCompoundFile(bytes);
  if (startsWith(bytes, [...Buffer.from("{\\rtf")])) {
    return { format: "rtf", mimeType: MIME.rtf, family: "text", hasMacros: false };
  }
  throw corrupt(mimeHint ? `is not in the format its type (${mimeHint}) says` : "is not an office document");
}

const inspection = (format: OfficeFormat, hasMacros: boolean, mimeType = MIME[format]): OfficeInspection => ({
  format,
  mimeType,
  family: FAMILY[format],
  hasMacros,
});

/** What an archive and the packages inside it declare, summed over every level. */
interface ZipTally {
  entries: number;
  unpackedBytes: number;
}

function openZip(bytes: Uint8Array): AdmZip.IZipEntry[] {
  try {
    return new AdmZip(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)).getEntries();
  } catch (cause) {
    throw new FileRejectedError(
      "document_corrupt",
      "This file is a damaged archive, so it cannot be read as an office document. Check that it opens in an office application and upload it again, or save it as PDF.",
      { cause },
    );
  }
}

/**
 * One entry's bytes, inflated to at most the size it declares (and `cap`): an entry that holds
 * more than it declares is a bomb in disguise, and never gets to fill memory.
 */
function unpackEntry(entry: AdmZip.IZipEntry, cap: number): Buffer {
  const declared = entry.header.size;
  if (declared > cap) throw tooLarge(`has a part (${entry.entryName}) larger than it may be`);
  let packed: Buffer;
  try {
    packed = entry.getCompressedData();
  } catch (cause) {
    throw new FileRejectedError(
      "document_corrupt",
      `This file's part ${entry.entryName} is damaged, so it cannot be read. Save it again from its application and upload that.`,
      { cause },
    );
  }
  if (entry.header.method === 0) return packed.subarray(0, declared);
  if (entry.header.method !== 8) throw corrupt(`packs ${entry.entryName} in a way office documents do not`);
  try {
    return inflateRawSync(packed, { maxOutputLength: Math.max(declared, 1) });
  } catch (cause) {
    // By its code, not `instanceof RangeError`: the error comes from Node's realm, not always the caller's.
    if ((cause as { code?: unknown }).code === "ERR_BUFFER_TOO_LARGE")
      throw tooLarge(`has a part (${entry.entryName}) that unpacks to more than it declares`);
    throw new FileRejectedError(
      "document_corrupt",
      `This file's part ${entry.entryName} is damaged, so it cannot be read. Save it again from its application and upload that.`,
      { cause },
    );
  }
}

/** Checks one archive's declared sizes and counts, then the packages embedded in it, level by level. */
function checkDeclaredSizes(
  entries: AdmZip.IZipEntry[],
  packedBytes: number,
  depth: number,
  tally: ZipTally,
  limits: InspectionLimits,
): void {
  if (depth > limits.maxNesting) throw tooLarge(`holds packages nested ${depth} deep`);
  let unpacked = 0;
  for (const entry of entries) unpacked += entry.header.size;
  tally.entries += entries.length;
  tally.unpackedBytes += unpacked;
  if (tally.entries > limits.maxEntries) throw tooLarge(`holds ${tally.entries} parts`);
  if (tally.unpackedBytes > limits.maxUnpackedBytes) {
    throw tooLarge(`declares ${Math.round(tally.unpackedBytes / 1024 / 1024)} MB once unpacked`);
  }
  if (unpacked > RATIO_FLOOR_BYTES && unpacked / Math.max(packedBytes, 1) > limits.maxRatio) {
    throw tooLarge(
      `unpacks ${Math.round(unpacked / Math.max(packedBytes, 1))} times larger than the file itself`,
    );
  }
  for (const entry of entries) {
    if (entry.isDirectory || !EMBEDDED_PACKAGE.test(entry.entryName)) continue;
    const inner = unpackEntry(entry, MAX_EMBEDDED_PACKAGE_BYTES);
    if (!startsWith(inner, [0x50, 0x4b])) continue;
    checkDeclaredSizes(openZip(inner), inner.length, depth + 1, tally, limits);
  }
}

function inspectZip(bytes: Uint8Array, limits: InspectionLimits): OfficeInspection {
  const entries = openZip(bytes);
  checkDeclaredSizes(entries, bytes.byteLength, 0, { entries: 0, unpackedBytes: 0 }, limits);
  const byName = new Map(entries.map((entry) => [entry.entryName, entry]));
  const manifest = (name: string) => {
    const entry = byName.get(name);
    return entry ? unpackEntry(entry, MAX_MANIFEST_BYTES).toString("utf8") : undefined;
  };

  const odfMime = manifest("mimetype")?.trim();
  if (odfMime !== undefined) {
    const format = ODF_MIME[odfMime];
    if (!format)
      throw corrupt(`is an OpenDocument file of a kind that is not read (${odfMime.slice(0, 80)})`);
    if (/<manifest:encryption-data\b/.test(manifest("META-INF/manifest.xml") ?? "")) throw encrypted();
    // Basic and dialog libraries live in Basic/ (an index file, script-lc.xml, is written even
    // for an empty one); Python, JavaScript and BeanShell scripts in Scripts/.
    const hasMacros = entries.some(
      (entry) =>
        !entry.isDirectory &&
        ((entry.entryName.startsWith("Basic/") &&
          !/\/script-l[bc]\.xml$|\/dialog-l[bc]\.xml$|^Basic\/script-lc\.xml$/.test(entry.entryName)) ||
          entry.entryName.startsWith("Scripts/")),
    );
    return inspection(format, hasMacros);
  }

  const contentTypes = manifest("[Content_Types].xml");
  if (contentTypes !== undefined) {
    const main = OOXML_MAIN_PARTS.find(({ pattern }) => pattern.test(contentTypes));
    if (!main)
      throw corrupt(
        "is an Office Open XML package that is neither a document, a presentation nor a workbook",
      );
    const hasMacros =
      main.mimeType !== undefined ||
      /vbaProject|ms-office\.activeX/i.test(contentTypes) ||
      entries.some((entry) => /(^|\/)vbaProject\.bin$/i.test(entry.entryName));
    return inspection(main.format, hasMacros, main.mimeType);
  }
  throw corrupt("is a zip archive, not an office document");
}

function streamBytes(entry: CFB.CFB$Entry | null | undefined): Uint8Array | undefined {
  if (!entry || entry.type !== 2) return undefined;
  return entry.content instanceof Uint8Array ? entry.content : Uint8Array.from(entry.content);
}

function inspectCompoundFile(bytes: Uint8Array): OfficeInspection {
  let container: CFB.CFB$Container;
  try {
    container = CFB.read(bytes, { type: "buffer" });
  } catch (cause) {
    throw new FileRejectedError(
      "document_corrupt",
      "This file is a damaged Office 97-2003 document, so it cannot be read. Check that it opens in an office application and upload it again, or save it as PDF.",
      { cause },
    );
  }
  // A stream at the top level: its full path is the root storage's followed by its name.
  const root = container.FullPaths[0] ?? "";
  const stream = (name: string) => streamBytes(container.FileIndex[container.FullPaths.indexOf(root + name)]);
  const names = new Set(container.FileIndex.map((entry) => entry.name));
  // An OOXML document saved with a password: the zip, encrypted, inside a compound file.
  if (names.has("EncryptedPackage") && names.has("EncryptionInfo")) throw encrypted();
  const hasMacros = ["Macros", "_VBA_PROJECT_CUR", "VBA", "_VBA_PROJECT"].some((name) => names.has(name));

  const word = stream("WordDocument");
  if (word) {
    // FIB base: the flags word at offset 10; bit 0x0100 is fEncrypted (MS-DOC 2.5.2).
    if (word.length < 12) throw corrupt("is a damaged Word 97-2003 document");
    if (((word[10]! | (word[11]! << 8)) & 0x0100) !== 0) throw encrypted();
    return inspection("doc", hasMacros);
  }
  const workbook = stream("Workbook") ?? stream("Book");
  if (workbook) {
    if (workbookHasFilePass(workbook)) throw encrypted();
    return inspection("xls", hasMacros);
  }
  const currentUser = stream("Current User");
  if (stream("PowerPoint Document") && currentUser) {
    // CurrentUserAtom after its 8-byte record header: size (4 bytes), then headerToken, which is
    // 0xF3D1C4DF when the presentation is encrypted (MS-PPT 2.3.2).
    const view = new DataView(currentUser.buffer, currentUser.byteOffset, currentUser.byteLength);
    if (currentUser.length >= 16 && view.getUint32(12, true) === 0xf3d1c4df) throw encrypted();
    return inspection("ppt", hasMacros);
  }
  throw corrupt(
    "is a compound file (like an installer or a mail message), not a Word, Excel or PowerPoint document",
  );
}

/** A FILEPASS record (0x002F) in the workbook globals, before their EOF (0x000A): encrypted (MS-XLS 2.4.117). */
function workbookHasFilePass(workbook: Uint8Array): boolean {
  const view = new DataView(workbook.buffer, workbook.byteOffset, workbook.byteLength);
  let at = 0;
  while (at + 4 <= workbook.length) {
    const type = view.getUint16(at, true);
    if (type === 0x002f) return true;
    if (type === 0x000a) return false;
    at += 4 + view.getUint16(at + 2, true);
  }
  return false;
}
