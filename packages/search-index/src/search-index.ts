import type { ExtractedPassage, StoredLocator } from "@locus/contracts";

export interface FileRef {
  userId: string;
  fileId: string;
}

export interface PassageHit {
  fileId: string;
  content: string;
  /** As stored: may hold keys search uses and never returns (see StoredLocator). */
  locator: StoredLocator;
  /** Relevance normalised into [0, 1): s / (1 + s) of the engine's BM25 score s. */
  score: number;
}

/**
 * The passage index shared by the indexer (writes) and search (reads). Embedded: SQLite FTS5;
 * split: Elasticsearch or Postgres full-text. Every read and write is scoped to one user.
 */
export interface SearchIndex {
  /**
   * Replaces every passage of the file with the given ones, atomically: searches see the old set
   * or the new one, never a mix or a duplicate. Returns how many passages were indexed.
   */
  replaceFilePassages(file: FileRef, passages: AsyncIterable<ExtractedPassage>): Promise<number>;
  deleteFilePassages(file: FileRef): Promise<void>;
  /** BM25 keyword search over one user's passages, best first. Any text is a safe query. */
  search(query: { userId: string; text: string; limit: number }): Promise<PassageHit[]>;
  check(): Promise<void>;
  close(): Promise<void>;
}

/** Maps an engine's unbounded relevance (higher is better, >= 0) into [0, 1), the same for every backend. */
export const normaliseScore = (raw: number): number => (raw > 0 ? raw / (1 + raw) : 0);

/** Letters with their combining marks (Devanagari vowel signs, decomposed accents), and digits. */
const WORD = /[\p{L}\p{M}\p{N}]+/gu;

/**
 * Words of a text as every index sees them: Unicode-normalised (NFKC: full-width letters,
 * ligatures), lower-cased, runs of letters and digits. Everything else (quotes, operators,
 * brackets, emoji) separates words and never reaches an engine's query syntax. Both indexed text
 * and queries go through this, so a word copied from a passage always finds it.
 */
export function words(text: string): string[] {
  return Array.from(text.normalize("NFKC").toLowerCase().matchAll(WORD), (m) => m[0]);
}

/** The distinct words of a query, at most `max` of them. */
export function queryTerms(text: string, max = 32): string[] {
  return [...new Set(words(text))].slice(0, max);
}

/**
 * Words so common in English that they tell passages apart hardly at all (BM25 gives them almost
 * no weight) yet match most passages, which makes ranking them slow. A query drops them when it
 * has other words; a query made only of them keeps them.
 */
const STOP_WORDS = new Set(
  (
    "a about after all also an and any are as at be been but by can could did do does for from had has have " +
    "he her his i if in into is it its may more most no not of on or our out over she so some such than that " +
    "the their them then there these they this those to under up was we were what when which while who will " +
    "with would you your"
  ).split(" "),
);

export function withoutStopWords(terms: readonly string[]): string[] {
  const kept = terms.filter((t) => !STOP_WORDS.has(t));
  return kept.length > 0 ? kept : [...terms];
}
