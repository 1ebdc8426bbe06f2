/**
 * The retrieval-quality fixtures' shape (bench/fixtures/quality/queries.json, made by
 * bench/quality/quality-make.ts), and the rules that decide whether a search result is where the truth is.
 */

/** The seed of every draw that made the queries. */
export const QUALITY_SEED = 20261123;

export interface FixtureFile {
  name: string;
  kind: "pdf" | "image" | "audio";
  bytes: number;
  pages?: number;
  durationS?: number;
  /** The Debian package it comes from. */
  source: { package: string; version: string; path: string; licence: string };
  /** For images and recordings: what they were made from, and how. */
  derivedFrom?: { file: string; page?: number; how: string };
}

/** A query whose truth is a line of a page (PDFs and images). */
export interface DocumentQuery {
  id: string;
  file: string;
  kind: "pdf" | "image";
  /** line: 3 distinctive words of one line; hyphen: a word the document cuts at a line's end, joined. */
  category: "line" | "hyphen";
  q: string;
  page: number;
  /** 1-based, non-empty lines from the top of the page (pdftotext -layout). */
  line: number;
  lineEnd: number;
  /** The truth line(s) as pdftotext prints them (for a hyphen query: the line and the next). */
  text: string;
  /** hyphen: the joined word is printed whole nowhere in the three manuals. */
  onlyOccurrence?: boolean;
}

/** A query whose truth is a stretch of a recording. */
export interface SpeechQuery {
  id: string;
  file: string;
  /** phrase: every word said; keywords: its (at most) 3 rarest content words. */
  category: "phrase" | "keywords";
  q: string;
  /** Seconds from the start of the recording, from its construction. */
  start: number;
  end: number;
  text: string;
  clip: string;
}

/** A question in natural language, answered by a line (or lines) of a PDF; written by hand. */
export interface AiQuestion {
  id: string;
  file: string;
  q: string;
  page: number;
  line: number;
  lineEnd: number;
  text: string;
}

export interface QualityFixtures {
  made: string;
  seed: number;
  files: FixtureFile[];
  documentQueries: DocumentQuery[];
  speechQueries: SpeechQuery[];
  aiQuestions: AiQuestion[];
  /** Hyphen-broken words left out (compounds, or not words), by file. */
  excludedHyphens: Record<string, string[]>;
}

/** Lowercase alphabetic tokens of a text (what the query's words are checked against). */
export const tokensOf = (text: string): string[] => text.toLowerCase().match(/[a-z]+/g) ?? [];

export interface ResultLocator {
  page?: number;
  line?: number;
  line_end?: number;
  timestamp?: number;
  timestamp_end?: number;
}

/** Speech: a result is a hit when its start is this close to the phrase's start. */
export const SPEECH_TOLERANCE_S = 2;

/** A result is right for a document truth: the file, the page, and a line range that meets the truth's. */
export function documentHit(
  truth: { page: number; line: number; lineEnd: number },
  loc: ResultLocator,
): boolean {
  if (loc.page !== truth.page || loc.line === undefined) return false;
  const end = loc.line_end ?? loc.line;
  return loc.line <= truth.lineEnd && end >= truth.line;
}

/** Lines between a result's range and the truth's (0 when they meet). */
export function linesAway(truth: { line: number; lineEnd: number }, loc: ResultLocator): number | null {
  if (loc.line === undefined) return null;
  const end = loc.line_end ?? loc.line;
  if (loc.line <= truth.lineEnd && end >= truth.line) return 0;
  return loc.line > truth.lineEnd ? loc.line - truth.lineEnd : truth.line - end;
}

/** A result is right for a speech truth: the file, and a start within SPEECH_TOLERANCE_S of the phrase's. */
export function speechHit(truth: { start: number }, loc: ResultLocator): boolean {
  return loc.timestamp !== undefined && Math.abs(loc.timestamp - truth.start) <= SPEECH_TOLERANCE_S;
}
