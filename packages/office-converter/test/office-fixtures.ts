import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { escapeXml } from "@locus/testing";
import type { OfficeFormat } from "../src/index.ts";

/** The words every fixture holds, found again in its PDF. */
export const WORDS = {
  text: "quokka lighthouse",
  presentation: "pelican harbour",
  spreadsheet: "walrus",
} as const;

const SOFFICE = "/usr/lib/libreoffice/program/soffice";

const flatText = `<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.text">
<office:body><office:text><text:p>The ${WORDS.text} report.</text:p></office:text></office:body></office:document>`;

const flatPresentation = `<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.presentation">
<office:body><office:presentation><draw:page draw:name="one"><draw:frame svg:x="2cm" svg:y="2cm" svg:width="20cm" svg:height="3cm"><draw:text-box><text:p>The ${WORDS.presentation} slide</text:p></draw:text-box></draw:frame></draw:page></office:presentation></office:body></office:document>`;

const flatSpreadsheet = `<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.spreadsheet">
<office:body><office:spreadsheet><table:table table:name="Animals"><table:table-row><table:table-cell office:value-type="string"><text:p>${WORDS.spreadsheet}</text:p></table:table-cell><table:table-cell office:value-type="float" office:value="42"><text:p>42</text:p></table:table-cell></table:table-row></table:table></office:spreadsheet></office:body></office:document>`;

/** LibreOffice's export filter for each format it writes here. */
const FILTERS: Record<OfficeFormat, { source: "fodt" | "fodp" | "fods"; filter: string }> = {
  docx: { source: "fodt", filter: "MS Word 2007 XML" },
  doc: { source: "fodt", filter: "MS Word 97" },
  odt: { source: "fodt", filter: "writer8" },
  rtf: { source: "fodt", filter: "Rich Text Format" },
  pptx: { source: "fodp", filter: "Impress MS PowerPoint 2007 XML" },
  ppt: { source: "fodp", filter: "MS PowerPoint 97" },
  odp: { source: "fodp", filter: "impress8" },
  xlsx: { source: "fods", filter: "Calc Office Open XML" },
  xls: { source: "fods", filter: "MS Excel 97" },
  ods: { source: "fods", filter: "calc8" },
};

/** The formats LibreOffice 7.4 protects with a password when saving from a macro (not OOXML, not PPT). */
export const ENCRYPTABLE = ["doc", "odt", "xls"] as const;

export interface OfficeFixtures {
  documents: Record<OfficeFormat, Buffer>;
  encrypted: Record<(typeof ENCRYPTABLE)[number], Buffer>;
}

/**
 * Every format written by LibreOffice itself, in one run of it: a Basic macro in a scratch profile
 * loads three flat OpenDocument files and stores each in its family's formats, and the encryptable
 * ones once more with a password. One start of LibreOffice instead of thirteen.
 */
export function buildOfficeFixtures(): OfficeFixtures {
  const dir = mkdtempSync(join(tmpdir(), "office-fixtures-"));
  try {
    return buildFixturesIn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function buildFixturesIn(dir: string): OfficeFixtures {
  writeFileSync(join(dir, "source.fodt"), flatText);
  writeFileSync(join(dir, "source.fodp"), flatPresentation);
  writeFileSync(join(dir, "source.fods"), flatSpreadsheet);
  const stores: string[] = [];
  const store = (source: string, target: string, filter: string, password: boolean) =>
    stores.push(
      `  Store(${basicString(join(dir, source))}, ${basicString(join(dir, target))}, ${basicString(filter)}, ${password ? "True" : "False"})`,
    );
  for (const [format, { source, filter }] of Object.entries(FILTERS))
    store(`source.${source}`, `plain.${format}`, filter, false);
  for (const format of ENCRYPTABLE)
    store(`source.${FILTERS[format].source}`, `encrypted.${format}`, FILTERS[format].filter, true);
  const storeRoutine = `Sub Store(source As String, target As String, filter As String, withPassword As Boolean)
  Dim load(0) As New com.sun.star.beans.PropertyValue
  load(0).Name = "Hidden"
  load(0).Value = True
  Dim doc As Object
  doc = StarDesktop.loadComponentFromURL(ConvertToURL(source), "_blank", 0, load())
  Dim props(1) As New com.sun.star.beans.PropertyValue
  props(0).Name = "FilterName"
  props(0).Value = filter
  props(1).Name = "Password"
  props(1).Value = "secret"
  If withPassword Then
    doc.storeToURL(ConvertToURL(target), props())
  Else
    Dim plain(0) As New com.sun.star.beans.PropertyValue
    plain(0) = props(0)
    doc.storeToURL(ConvertToURL(target), plain())
  End If
  doc.close(True)
End Sub

`;
  const run = runBasic(dir, storeRoutine, stores.join("\n"));
  const read = (name: string) => {
    try {
      return readFileSync(join(dir, name));
    } catch {
      throw new Error(`LibreOffice did not write ${name} (${run})`);
    }
  };
  const documents = Object.fromEntries(
    Object.keys(FILTERS).map((format) => [format, read(`plain.${format}`)]),
  ) as Record<OfficeFormat, Buffer>;
  const encrypted = Object.fromEntries(
    ENCRYPTABLE.map((format) => [format, read(`encrypted.${format}`)]),
  ) as Record<(typeof ENCRYPTABLE)[number], Buffer>;
  return { documents, encrypted };
}

/**
 * Runs `main` (Basic statements, with `subs` beside them) in a LibreOffice started for it with a
 * scratch profile in `dir`; what went wrong, if anything, as a sentence.
 */
function runBasic(dir: string, subs: string, main: string): string {
  const module = `${subs}
Sub Main
  On Error Goto Failed
${main}
  StarDesktop.terminate()
  Exit Sub
Failed:
  Dim n As Integer
  n = FreeFile
  Open ${basicString(join(dir, "macro-error.txt"))} For Output As #n
  Print #n, Error$ & " at line " & Erl
  Close #n
  StarDesktop.terminate()
End Sub
`;
  // A first start lays out the fresh profile; the macro library is put into it afterwards (put
  // there before, LibreOffice does not find it).
  const profile = `-env:UserInstallation=file://${join(dir, "profile")}`;
  const env = { ...process.env, HOME: dir };
  spawnSync(SOFFICE, [profile, "--headless", "--terminate_after_init"], { timeout: 120_000, env });
  const basic = join(dir, "profile", "user", "basic");
  mkdirSync(join(basic, "Standard"), { recursive: true });
  writeFileSync(
    join(basic, "script.xlc"),
    `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE library:libraries PUBLIC "-//OpenOffice.org//DTD OfficeDocument 1.0//EN" "libraries.dtd">
<library:libraries xmlns:library="http://openoffice.org/2000/library" xmlns:xlink="http://www.w3.org/1999/xlink">
 <library:library library:name="Standard" xlink:href="$(USER)/basic/Standard/script.xlb/" xlink:type="simple" library:link="false"/>
</library:libraries>`,
  );
  writeFileSync(
    join(basic, "Standard", "script.xlb"),
    `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE library:library PUBLIC "-//OpenOffice.org//DTD OfficeDocument 1.0//EN" "library.dtd">
<library:library xmlns:library="http://openoffice.org/2000/library" library:name="Standard" library:readonly="false" library:passwordprotected="false">
 <library:element library:name="Fixtures"/>
</library:library>`,
  );
  writeFileSync(
    join(basic, "Standard", "Fixtures.xba"),
    `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE script:module PUBLIC "-//OpenOffice.org//DTD OfficeDocument 1.0//EN" "module.dtd">
<script:module xmlns:script="http://openoffice.org/2000/script" script:name="Fixtures" script:language="StarBasic">${escapeXml(module)}</script:module>`,
  );
  const run = spawnSync(
    SOFFICE,
    [profile, "--headless", "--norestore", "--nolockcheck", "--nologo", "macro:///Standard.Fixtures.Main"],
    { encoding: "utf8", timeout: 120_000, env },
  );
  let error = "";
  try {
    error = readFileSync(join(dir, "macro-error.txt"), "utf8").trim();
  } catch {
    // no error file: the macro ran through, or did not run at all
  }
  return `LibreOffice ended with ${run.status ?? run.signal}${error ? `; the macro failed: ${error}` : ""}; ${run.stderr}`;
}

/**
 * Runs the document's own Basic routine Standard.Module1.OnOpen, as LibreOffice would with macros
 * allowed (MacroExecutionMode ALWAYS_EXECUTE_NO_WARN): the control that shows a macro document's
 * routine is live. (LibreOffice 7.4 does not fire a document's load event in a headless load even
 * then, so the routine is called through the document's script provider.)
 */
export function runDocumentMacro(document: Buffer): string {
  const dir = mkdtempSync(join(tmpdir(), "office-macro-control-"));
  try {
    writeFileSync(join(dir, "macro.odt"), document);
    return runBasic(
      dir,
      "",
      `  Dim load(1) As New com.sun.star.beans.PropertyValue
  load(0).Name = "Hidden"
  load(0).Value = True
  load(1).Name = "MacroExecutionMode"
  load(1).Value = com.sun.star.document.MacroExecMode.ALWAYS_EXECUTE_NO_WARN
  Dim doc As Object
  doc = StarDesktop.loadComponentFromURL(ConvertToURL(${basicString(join(dir, "macro.odt"))}), "_blank", 0, load())
  doc.getScriptProvider().getScript("vnd.sun.star.script:Standard.Module1.OnOpen?language=Basic&location=document").invoke(Array(), Array(), Array())
  doc.close(True)`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A Basic string literal. */
const basicString = (text: string) => `"${text.replace(/"/g, '""')}"`;
