import type { ExtractedPassage, Locator } from "@locus/contracts";

export interface FileRef {
  userId: string;
  fileId: string;
}

export interface PassageHit {
  fileId: string;
  content: string;
  locator: Locator;
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

/**
 * Words of a query as the index tokenises them: runs of letters and digits. Everything else
 * (quotes, operators, brackets, emoji) separates words and never reaches the engine's syntax.
 */
export function queryTerms(text: string, max = 32): string[] {
  const terms = new Set<string>();
  for (const match of text
    .normalize("NFKC")
    .toLowerCase()
    .matchAll(/[\p{L}\p{N}]+/gu)) {
    terms.add(match[0]);
    if (terms.size >= max) break;
  }
  return [...terms];
}
