import type { ExtractedPassage, StoredLocator } from "@locus/contracts";
import { words } from "@locus/passages";

export { words, withoutStopWords } from "@locus/passages";

export interface FileRef {
  userId: string;
  fileId: string;
}

export interface PassageHit {
  /** The passage's identity in this index (opaque): the same passage has the same id in every search. */
  id: string;
  fileId: string;
  content: string;
  /** As stored: may hold keys search uses and never returns (see StoredLocator). */
  locator: StoredLocator;
  /**
   * Relevance in [0, 1]: for keyword search s / (1 + s) of the engine's BM25 score s; for vector
   * search the cosine similarity (negative ones count as 0).
   */
  score: number;
}

/**
 * Each passage can hold two vectors: `local`, from the offline engine, always made so that ai
 * search has something to fall back to; and `remote`, from the configured remote engine when
 * there is one. Each is stored with its space (see Embedder.space): a search compares a question
 * only with vectors of the question's own space.
 */
export type VectorSlot = "local" | "remote";
export type PassageVectors = Partial<Record<VectorSlot, { space: string; vector: Float32Array }>>;

/** A passage as the indexer hands it to the index: the extraction's, with its vectors. */
export interface IndexedPassage extends ExtractedPassage {
  vectors?: PassageVectors;
}

export interface VectorQuery {
  userId: string;
  slot: VectorSlot;
  space: string;
  /** Unit length, of the space's dimensions. */
  vector: Float32Array;
  limit: number;
}

/**
 * The passage index shared by the indexer (writes) and search (reads). Embedded: SQLite FTS5;
 * split: Elasticsearch or Postgres full-text. Every read and write is scoped to one user. Passages
 * are stored with their vectors, for ai mode's semantic half.
 */
export interface SearchIndex {
  /**
   * Replaces every passage of the file with the given ones, atomically: searches see the old set
   * or the new one, never a mix or a duplicate. Returns how many passages were indexed.
   */
  replaceFilePassages(file: FileRef, passages: AsyncIterable<IndexedPassage>): Promise<number>;
  deleteFilePassages(file: FileRef): Promise<void>;
  /** BM25 keyword search over one user's passages, best first. Any text is a safe query. */
  search(query: { userId: string; text: string; limit: number }): Promise<PassageHit[]>;
  /**
   * The user's passages whose vector in `slot` is of the query's space, nearest first (cosine
   * similarity, exact or approximate by backend). Passages without one are not returned.
   */
  vectorSearch(query: VectorQuery): Promise<PassageHit[]>;
  check(): Promise<void>;
  close(): Promise<void>;
}

/** Maps an engine's unbounded relevance (higher is better, >= 0) into [0, 1), the same for every backend. */
export const normaliseScore = (raw: number): number => (raw > 0 ? raw / (1 + raw) : 0);

/** The distinct words of a query, at most `max` of them. */
export function queryTerms(text: string, max = 32): string[] {
  return [...new Set(words(text))].slice(0, max);
}
