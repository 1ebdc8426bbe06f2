import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";

/**
 * Office documents for tests, written by LibreOffice itself (the soffice that converts them in
 * Locus): a flat OpenDocument file (XML) made here, converted to the format asked for. Each call
 * has a profile of its own, so calls can run at once.
 */
const run = promisify(execFile);

export type TextDocumentFormat = "docx" | "odt" | "doc" | "rtf";
export type PresentationFormat = "pptx" | "odp" | "ppt";
export type SpreadsheetFormat = "xlsx" | "ods" | "xls";

/** `text` safe inside XML, in an element or a double-quoted attribute. */
export const escapeXml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

const NS =
  'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" ' +
  'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" ' +
  'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" ' +
  'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" ' +
  'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" ' +
  'xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" ' +
  'xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" ' +
  'xmlns:xlink="http://www.w3.org/1999/xlink" ' +
  'xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0"';

/** Converts a flat OpenDocument file to `format` with soffice, in a directory and profile of its own. */
async function convert(flat: string, extension: "fodt" | "fodp" | "fods", format: string): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), "locus-office-"));
  try {
    const source = join(dir, `document.${extension}`);
    await writeFile(source, flat);
    await run(
      "soffice",
      [
        `-env:UserInstallation=${pathToFileURL(join(dir, "profile")).href}`,
        "--headless",
        "--norestore",
        "--convert-to",
        format,
        "--outdir",
        dir,
        source,
      ],
      { timeout: 120_000 },
    );
    return await readFile(join(dir, `document.${format}`));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * A text document whose pages hold the given paragraphs: each page starts on a new page (a page
 * break before its first paragraph), one line per paragraph when they are short.
 */
export function makeTextDocument(
  format: TextDocumentFormat,
  pages: readonly (readonly string[])[],
): Promise<Buffer> {
  const body = pages
    .map((paragraphs, page) =>
      paragraphs
        .map(
          (text, i) =>
            `<text:p text:style-name="${page > 0 && i === 0 ? "NewPage" : "Standard"}">${escapeXml(text)}</text:p>`,
        )
        .join(""),
    )
    .join("");
  const flat =
    `<?xml version="1.0" encoding="UTF-8"?><office:document ${NS} office:version="1.3" ` +
    `office:mimetype="application/vnd.oasis.opendocument.text"><office:automatic-styles>` +
    `<style:style style:name="NewPage" style:family="paragraph" style:parent-style-name="Standard">` +
    `<style:paragraph-properties fo:break-before="page"/></style:style></office:automatic-styles>` +
    `<office:body><office:text>${body}</office:text></office:body></office:document>`;
  return convert(flat, "fodt", format);
}

/** A presentation of one slide per entry, each with a text box holding the given lines. */
export function makePresentation(
  format: PresentationFormat,
  slides: readonly (readonly string[])[],
): Promise<Buffer> {
  const pages = slides
    .map(
      (lines, i) =>
        `<draw:page draw:name="slide${i + 1}"><draw:frame svg:x="2cm" svg:y="2cm" svg:width="22cm" ` +
        `svg:height="12cm"><draw:text-box>${lines.map((l) => `<text:p>${escapeXml(l)}</text:p>`).join("")}` +
        `</draw:text-box></draw:frame></draw:page>`,
    )
    .join("");
  const flat =
    `<?xml version="1.0" encoding="UTF-8"?><office:document ${NS} office:version="1.3" ` +
    `office:mimetype="application/vnd.oasis.opendocument.presentation"><office:body><office:presentation>` +
    `${pages}</office:presentation></office:body></office:document>`;
  return convert(flat, "fodp", format);
}

/** A spreadsheet of one sheet holding the given rows of cells (as text). */
export function makeSpreadsheet(
  format: SpreadsheetFormat,
  rows: readonly (readonly string[])[],
): Promise<Buffer> {
  const body = rows
    .map(
      (cells) =>
        `<table:table-row>${cells
          .map(
            (c) =>
              `<table:table-cell office:value-type="string"><text:p>${escapeXml(c)}</text:p></table:table-cell>`,
          )
          .join("")}</table:table-row>`,
    )
    .join("");
  const flat =
    `<?xml version="1.0" encoding="UTF-8"?><office:document ${NS} office:version="1.3" ` +
    `office:mimetype="application/vnd.oasis.opendocument.spreadsheet"><office:body><office:spreadsheet>` +
    `<table:table table:name="Sheet1">${body}</table:table></office:spreadsheet></office:body></office:document>`;
  return convert(flat, "fods", format);
}

/**
 * The non-empty lines of each page of a PDF as pdftotext prints them with its layout (the lines a
 * reader sees, counted as Locus counts `line`): what a document's locators are checked against.
 */
export async function pdfPageLines(pdf: Uint8Array): Promise<string[][]> {
  const dir = await mkdtemp(join(tmpdir(), "locus-pdf-lines-"));
  try {
    const path = join(dir, "document.pdf");
    await writeFile(path, pdf);
    const { stdout } = await run("pdftotext", ["-layout", path, "-"], { maxBuffer: 64 * 1024 * 1024 });
    // Pages end with a form feed; the last one is followed by nothing.
    const pages = stdout.split("\f");
    if (pages.at(-1)?.trim() === "") pages.pop();
    return pages.map((page) => page.split("\n").filter((line) => line.trim().length > 0));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
