import type { ExtractedPassage, FileFilter, FileMetadata, FileType, StoredLocator } from "@locus/contracts";
export { indexTerms, queryTerms } from "@locus/passages";

export interface FileRef {
  userId: string;
  fileId: string;
}

/** What a search's FileFilter can ask of a file, stored beside its passages so filters run inside the index. */
export interface FileAttributes {
  fileType: FileType;
  /** When the file was uploaded: ISO 8601, UTC (as the file record's `created_at`). */
  createdAt: string;
  metadata: FileMetadata;
}

/**
 * A file as the index stores it. Without attributes (passages indexed before filters existed, or by
 * a tool that has none), the file is found by unfiltered searches and by `fileIds` alone.
 */
export interface IndexedFile extends FileRef {
  attributes?: FileAttributes;
}

export interface PassageHit {
  /** The passage's identity in this index (opaque): the same passage has the same id in every search. */
  id: string;
  fileId: string;
  /** The passage's position among its file's passages, from 0 (extraction order). */
  ord: number;
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

/** A passage as the meaning stage reads it: its place in its file and its text. */
export interface PassageToEncode {
  ord: number;
  content: string;
}

/** A passage's vector as the meaning stage made it, from the text it read. */
export interface EncodedPassage extends PassageToEncode {
  vector: Float32Array;
}

/** Which passages of a file lack a vector of `space` in `slot` (see SearchIndex.passagesWithoutVector). */
export interface MissingVectorQuery {
  file: FileRef;
  slot: VectorSlot;
  space: string;
  /** Only passages after this one (by `ord`): the next page of a file being read in turn. */
  afterOrd?: number;
  limit: number;
}

/** One file's passages, as a rebuild reads them from the stored extractions. */
export interface FilePassages {
  file: IndexedFile;
  passages: AsyncIterable<IndexedPassage>;
}

/** Passages `from`..`to` (by `ord`, inclusive) of one file. */
export interface PassageRange {
  fileId: string;
  from: number;
  to: number;
}

/** At most this many ranges in one `passagesInRanges`, each at most this wide: what lies around a few hits. */
export const MAX_PASSAGE_RANGES = 32;
export const MAX_PASSAGE_RANGE_WIDTH = 16;

export interface VectorQuery {
  userId: string;
  slot: VectorSlot;
  space: string;
  /** Unit length, of the space's dimensions. */
  vector: Float32Array;
  limit: number;
  /** Only passages of files that pass this filter; applied before the nearest `limit` are taken. */
  filter?: FileFilter;
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
  replaceFilePassages(file: IndexedFile, passages: AsyncIterable<IndexedPassage>): Promise<number>;
  deleteFilePassages(file: FileRef): Promise<void>;
  /**
   * Re-creates the index from every file's passages (`locus index rebuild`), searches working
   * throughout. An index that can load a whole new copy of itself and switch to it at once does so
   * (Elasticsearch, behind its alias); the others replace each file's passages in turn
   * (replaceEachFile). Returns how many files and passages were indexed.
   */
  rebuild(source: AsyncIterable<FilePassages>): Promise<{ files: number; passages: number }>;
  /**
   * BM25 keyword search over one user's passages, best first. Any text is a safe query. With a
   * filter, only passages of files that pass it are ranked (the filter is part of the query, so
   * `limit` results come back whenever that many match).
   */
  search(query: { userId: string; text: string; limit: number; filter?: FileFilter }): Promise<PassageHit[]>;
  /**
   * The user's passages whose vector in `slot` is of the query's space, nearest first (cosine
   * similarity, exact or approximate by backend). Passages without one are not returned.
   */
  vectorSearch(query: VectorQuery): Promise<PassageHit[]>;
  /**
   * The user's passages in the given ranges of their files, ordered by file (as the ranges name
   * them first) and `ord`, each once (score 0): the text around a hit, so a sentence cut by a
   * passage's edge can be read whole. Ranges beyond MAX_PASSAGE_RANGES, or wider than
   * MAX_PASSAGE_RANGE_WIDTH, are cut to those limits.
   */
  passagesInRanges(query: { userId: string; ranges: readonly PassageRange[] }): Promise<PassageHit[]>;
  check(): Promise<void>;
  close(): Promise<void>;
}

/**
 * What the meaning stage needs of an index besides SearchIndex: the passages a file still lacks
 * vectors for, and a way to add vectors to passages already indexed (the file was made searchable
 * by keyword first). SQLite and Postgres have it; Elasticsearch not yet (its documents keep no
 * vectors in `_source`, so an update would drop the other slot's: see elasticsearch-index-mapping).
 */
export interface PassageVectorWriter {
  /**
   * The file's passages with no vector of `space` in `slot` (none yet, or another engine's), by
   * `ord`: what the meaning stage still has to encode.
   */
  passagesWithoutVector(query: MissingVectorQuery): Promise<PassageToEncode[]>;
  /**
   * Stores vectors in `slot`, tagged `space`, on the file's passages, each only where the passage
   * at `ord` still holds the `content` it was made from: a file replaced or deleted since its
   * passages were read keeps what it has now. One atomic write. Returns how many were stored.
   */
  setPassageVectors(
    file: FileRef,
    slot: VectorSlot,
    space: string,
    vectors: readonly EncodedPassage[],
  ): Promise<number>;
}

/** Whether an index can take vectors after its passages (see PassageVectorWriter). */
export const writesVectorsLater = (index: SearchIndex): index is SearchIndex & PassageVectorWriter =>
  "setPassageVectors" in index && "passagesWithoutVector" in index;

/**
 * A rebuild by replacing each file's passages in turn (replaceFilePassages, atomic per file): for
 * an index that cannot swap in a whole new copy of itself.
 */
export async function replaceEachFile(
  index: SearchIndex,
  source: AsyncIterable<FilePassages>,
): Promise<{ files: number; passages: number }> {
  let files = 0;
  let passages = 0;
  for await (const { file, passages: filePassages } of source) {
    passages += await index.replaceFilePassages(file, filePassages);
    files += 1;
  }
  return { files, passages };
}

/** Maps an engine's unbounded relevance (higher is better, >= 0) into [0, 1), the same for every backend. */
export const normaliseScore = (raw: number): number => (raw > 0 ? raw / (1 + raw) : 0);

/**
 * The ranges a backend reads: at most MAX_PASSAGE_RANGES of them, each cut to
 * MAX_PASSAGE_RANGE_WIDTH passages, empty and invalid ones dropped.
 */
export function boundedRanges(ranges: readonly PassageRange[]): PassageRange[] {
  return ranges
    .filter((r) => Number.isInteger(r.from) && Number.isInteger(r.to) && r.to >= r.from && r.to >= 0)
    .slice(0, MAX_PASSAGE_RANGES)
    .map((r) => {
      const from = Math.max(0, r.from);
      return { fileId: r.fileId, from, to: Math.min(r.to, from + MAX_PASSAGE_RANGE_WIDTH - 1) };
    });
}

/** Hits of several ranges in the order `passagesInRanges` promises: by the ranges' files, then ord, once each. */
export function inRangeOrder(ranges: readonly PassageRange[], hits: readonly PassageHit[]): PassageHit[] {
  const fileOrder = new Map<string, number>();
  for (const r of ranges) if (!fileOrder.has(r.fileId)) fileOrder.set(r.fileId, fileOrder.size);
  const unique = new Map(hits.map((h) => [h.id, h]));
  return [...unique.values()].sort(
    (a, b) => (fileOrder.get(a.fileId) ?? 0) - (fileOrder.get(b.fileId) ?? 0) || a.ord - b.ord,
  );
}
