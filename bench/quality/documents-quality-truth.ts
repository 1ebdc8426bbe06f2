/**
 * The document retrieval-quality fixtures' shape (bench/fixtures/documents/queries.json, made by
 * bench/quality/documents-quality-make.ts), and the rule that decides whether a search result is where the
 * truth is. Office documents' truths are a page and a line of their PDF rendition; text files'
 * truths are a line of the text as a reader sees it (no page).
 */

/** The seed of every draw that made the queries (plus the file's index in the fixtures). */
export const DOCUMENTS_QUALITY_SEED = 20261126;

/** How the benchmark groups documents: the three office families, and text files. */
export type DocumentQualityKind = "writer" | "presentation" | "spreadsheet" | "text";
export const DOCUMENT_QUALITY_KINDS: readonly DocumentQualityKind[] = [
  "writer",
  "presentation",
  "spreadsheet",
  "text",
];

export interface DocumentQualityFile {
  name: string;
  /** Where the file is, from the repository's root. */
  path: string;
  kind: DocumentQualityKind;
  /** odt, docx, ... for office documents; plain, markdown or html for text files. */
  format: string;
  bytes: number;
  /** Pages of the rendition the truth was read from (office documents), else null. */
  pages: number | null;
  /** Non-empty lines the truth counts (all pages, or the whole text). */
  lines: number;
  /** Where the line truth comes from. */
  truth: string;
}

/** A query whose truth is one line: of a rendition's page (office), or of a text (page null). */
export interface DocumentQualityQuery {
  id: string;
  file: string;
  kind: DocumentQualityKind;
  /** 3 distinctive words of the line, as quality-make's `line` category. */
  q: string;
  page: number | null;
  /** 1-based, non-empty lines from the top of the page (office) or of the text. */
  line: number;
  /** The truth line as the truth source prints it, trimmed. */
  text: string;
}

export interface DocumentQualityFixtures {
  made: string;
  seed: number;
  /** The LibreOffice that made the renditions the office truths were read from. */
  libreOfficeVersion: string;
  files: DocumentQualityFile[];
  queries: DocumentQualityQuery[];
}

export interface DocumentLocator {
  page?: number;
  line?: number;
  line_end?: number;
  section?: string[];
}

/** Same page (both absent for text) as the truth. */
export const samePage = (truth: { page: number | null }, loc: DocumentLocator): boolean =>
  (loc.page ?? null) === truth.page;

/** A result is right: the truth's page (none for text) and a line range holding the truth line. */
export function documentLineHit(truth: { page: number | null; line: number }, loc: DocumentLocator): boolean {
  if (!samePage(truth, loc) || loc.line === undefined) return false;
  return loc.line <= truth.line && (loc.line_end ?? loc.line) >= truth.line;
}

/** Lines between a result's range and the truth line (0 when the range holds it). */
export function documentLinesAway(truth: { line: number }, loc: DocumentLocator): number | null {
  if (loc.line === undefined) return null;
  const end = loc.line_end ?? loc.line;
  if (loc.line <= truth.line && end >= truth.line) return 0;
  return loc.line > truth.line ? loc.line - truth.line : truth.line - end;
}
