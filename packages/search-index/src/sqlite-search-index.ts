import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import {
  boundedRanges,
  inRangeOrder,
  queryTerms,
  replaceEachFile,
  type FilePassages,
  type FileRef,
  type IndexedFile,
  type IndexedPassage,
  type PassageHit,
  type EncodedPassage,
  type MissingVectorQuery,
  type PassageRange,
  type PassageToEncode,
  type PassageVectorWriter,
  type SearchIndex,
  type VectorQuery,
  type VectorSlot,
} from "./search-index.ts";
import { type VectorCache, VectorMatrix, vectorCacheOf, type VectorSearchOptions } from "./vector-matrix.ts";
import { VECTOR_SLOTS, migrate } from "./sqlite-schema.ts";
import { deleteFile, replaceFile, setVectors } from "./sqlite-passage-writes.ts";
import {
  generationOf,
  hitOf,
  rowsInRanges,
  rowsWithoutVector,
  userPassagesById,
  vectorRows,
} from "./sqlite-passage-reads.ts";
import { Fts5Search } from "./sqlite-fts5-search.ts";
import type { FileFilter } from "@locus/contracts";
import { filterConditions } from "./file-filter.ts";
import { passingFiles } from "./sqlite-file-filter.ts";

export type SqliteSearchIndexOptions = VectorSearchOptions;

/**
 * SQLite FTS5 with BM25 ranking. Passages live in a plain table (what results show); an
 * external-content FTS5 table indexes their tenant-prefixed terms, kept in step by triggers.
 * Terms are made in JavaScript (see `indexTerms`), so queries and passages are tokenised the same
 * way here as in every other backend.
 *
 * Ranking is BM25 on the user's own statistics, as in every backend (bm25.ts). FTS5's `bm25()`
 * already counts only the user's passages holding a term (the term carries the tenant), but takes
 * the number of passages and their mean length from the whole table, every account's. So FTS5
 * picks the best candidates (at least MIN_CANDIDATES), and they are scored again with the user's
 * own counts: `user_stats`, kept in the transaction that changes the passages, and
 * `passages_vocab` (FTS5's own per-term counts). When the user is the file's only one, FTS5's
 * totals are theirs and its score is kept. With one user in the file the two rankings are the same; with
 * many, a passage FTS5 ranks below every candidate is not found again, which needs the user's
 * statistics to differ a lot from everyone's.
 *
 * Vectors are BLOB columns beside the passage (each slot with its space) and searched exactly in
 * memory (see VectorMatrix); `vector_generations` counts each user's changes, so a cached matrix
 * is used only while it is still the user's passages.
 */
export class SqliteSearchIndex implements SearchIndex, PassageVectorWriter {
  private readonly db: BetterSqlite3.Database;
  private readonly fts5: Fts5Search;
  private readonly vectors: VectorCache;

  constructor(path: string, options: SqliteSearchIndexOptions = {}) {
    this.vectors = vectorCacheOf(options);
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    this.db = new BetterSqlite3(path);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("busy_timeout = 5000");
    this.db.pragma("synchronous = NORMAL");
    migrate(this.db);
    this.fts5 = new Fts5Search(this.db);
  }

  async replaceFilePassages(file: IndexedFile, passages: AsyncIterable<IndexedPassage>): Promise<number> {
    return replaceFile(this.db, file, passages);
  }

  /** Each file's passages replaced in turn: searches see every other file throughout. */
  rebuild(source: AsyncIterable<FilePassages>): Promise<{ files: number; passages: number }> {
    return replaceEachFile(this, source);
  }

  deleteFilePassages(file: FileRef): Promise<void> {
    deleteFile(this.db, file);
    return Promise.resolve();
  }

  search(query: { userId: string; text: string; limit: number; filter?: FileFilter }): Promise<PassageHit[]> {
    try {
      const terms = queryTerms(query.text);
      const limit = Math.max(0, Math.floor(query.limit));
      const conditions = filterConditions(query.filter);
      if (terms.length === 0 || limit === 0 || conditions?.matchesNothing) return Promise.resolve([]);
      return Promise.resolve(this.fts5.search(query.userId, terms, limit, conditions));
    } catch (err) {
      // A filter that cannot be read (an instant that is not one) rejects, as every backend's does.
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  /** Resolves when every user's approximate vector index has caught up with their vectors (tests, benchmarks). */
  approximateIndexesSettled(): Promise<void> {
    return this.vectors.approximateIndexesSettled();
  }

  /**
   * Nearest neighbours over the user's cached matrix, by its approximate index once built (see
   * VectorCache), else exactly. With a filter, the ids of the user's files that pass it are read
   * and the scan considers only their rows, so the nearest `limit` are taken among passages that
   * pass.
   */
  async vectorSearch(query: VectorQuery): Promise<PassageHit[]> {
    const { userId, slot, space } = query;
    if (query.limit <= 0 || !VECTOR_SLOTS.includes(slot)) return [];
    const conditions = filterConditions(query.filter);
    if (conditions?.matchesNothing) return [];
    const generation = generationOf(this.db, userId);
    const onlyFiles = conditions ? passingFiles(this.db, userId, conditions) : undefined;
    if (onlyFiles?.size === 0) return [];
    const nearest = await this.vectors.nearest(
      JSON.stringify([userId, slot, space]),
      String(generation),
      () =>
        Promise.resolve(VectorMatrix.fromRows(vectorRows(this.db, userId, slot, space), query.vector.length)),
      { vector: query.vector, k: query.limit, onlyFiles },
    );
    if (nearest.length === 0) return [];
    const rows = userPassagesById(
      this.db,
      userId,
      nearest.map((n) => Number(n.id)),
    );
    // A passage replaced since the matrix was read is skipped rather than shown stale.
    return nearest.flatMap((n) => {
      const row = rows.get(n.id);
      return row ? [hitOf(row, Math.max(0, n.score))] : [];
    });
  }

  passagesInRanges(query: { userId: string; ranges: readonly PassageRange[] }): Promise<PassageHit[]> {
    const ranges = boundedRanges(query.ranges);
    const rows = rowsInRanges(this.db, query.userId, ranges);
    return Promise.resolve(
      inRangeOrder(
        ranges,
        rows.map((r) => hitOf(r, 0)),
      ),
    );
  }

  passagesWithoutVector(query: MissingVectorQuery): Promise<PassageToEncode[]> {
    if (!VECTOR_SLOTS.includes(query.slot)) return Promise.resolve([]);
    return Promise.resolve(rowsWithoutVector(this.db, query));
  }

  setPassageVectors(
    file: FileRef,
    slot: VectorSlot,
    space: string,
    vectors: readonly EncodedPassage[],
  ): Promise<number> {
    try {
      return Promise.resolve(setVectors(this.db, file, slot, space, vectors));
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  check(): Promise<void> {
    this.db.prepare("SELECT 1").get();
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.vectors.close();
    this.db.close();
    return Promise.resolve();
  }
}
