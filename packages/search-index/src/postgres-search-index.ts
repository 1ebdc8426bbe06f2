import type pg from "pg";
import {
  boundedRanges,
  inRangeOrder,
  normaliseScore,
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
import type { UserPostings } from "./postings.ts";
import { rollbackAndRelease, searchIndexPool, unavailableIfDown } from "./postgres-connection.ts";
import { VECTOR_SLOTS, migrate, postgresTables, type PostgresTables } from "./postgres-schema.ts";
import { deleteFile, replaceFile, setVectors } from "./postgres-passage-writes.ts";
import {
  generationOf,
  hitOf,
  passagesById,
  rowsWithoutVector,
  type PassageRow,
} from "./postgres-passage-reads.ts";
import { PostingsLoader, type PostingsLoaded } from "./postgres-postings-loader.ts";
import { searchInSql } from "./postgres-bm25-sql.ts";
import type { FileFilter } from "@locus/contracts";
import { filterConditions, type FilterConditions } from "./file-filter.ts";
import { matchesNothingHere, passingFiles } from "./postgres-file-filter.ts";

export type { PostingsLoaded } from "./postgres-postings-loader.ts";

export interface PostgresSearchIndexOptions extends VectorSearchOptions {
  connectionString: string;
  /**
   * Where the index keeps its table and text-search configuration; created if missing. Lower-case
   * letters, digits and underscores, so it never needs quoting. Default `locus_search`.
   */
  schema?: string;
  /** Connections kept open (default 10). A replacement holds one while its stream lasts. */
  poolSize?: number;
  /**
   * Memory for users' postings kept between quick searches, per process (default 128 MB; 0: every
   * quick search is scored in SQL). See UserPostings.
   */
  postingsCacheBytes?: number;
  /**
   * Whether a user's first quick search (in this process) is answered in SQL while their postings
   * load behind it (default), or waits for them: a test's way to choose the path it checks.
   */
  loadPostingsInBackground?: boolean;
  /**
   * Told when a user's postings have been read in full (a first search in this process, or after
   * they were let go): for the operator's log, since searches until then were scored in SQL.
   */
  onPostingsLoaded?: (loaded: PostingsLoaded) => void;
}

/**
 * Passages in one table, searched with Postgres full-text search.
 *
 * - Terms are made in JavaScript (`indexTerms`, `queryTerms`: folded, Porter-stemmed), the same
 *   for every backend, and handed to Postgres as a tsvector and a tsquery literal: no text-search
 *   configuration parses, stems or drops anything, so the same query matches the same passages
 *   here as in SQLite and Elasticsearch. Each term keeps its positions (how often it occurs).
 * - Ranking is BM25 on the user's own statistics, the same formula and parameters as SQLite's FTS5
 *   (see bm25.ts), computed in SQL: `term_stats` counts the user's passages holding each term and
 *   `user_stats` their passages and terms, both changed in the transaction that changes the
 *   passages. A passage keeps its length in terms and, in `repeats`, the count of each term it
 *   holds more than once: with the tsvector's own `@@` for presence that is every term frequency,
 *   read faster than by unpacking the tsvector's positions.
 * - Tenancy is in the query and in the index: with btree_gin, one GIN index on (user_id, tsv)
 *   intersects the caller's posting list with each word's, so a search never walks other users'
 *   matches. Without btree_gin (not installable by this role), a plain GIN on tsv plus the
 *   user_id filter is still correct, only slower when other users share the words.
 * - Vectors are bytea columns beside the passage (each slot with its space), searched exactly in
 *   the search process's memory (see VectorMatrix), so no extension (pgvector) is needed. The
 *   `vector_generations` row of a user changes in every transaction that changes their passages,
 *   so each search process knows when its cached copy is stale.
 * - Every table is named with its schema rather than through search_path, so isolation does not
 *   depend on a startup parameter that PgBouncer's transaction pooling would drop, or that a
 *   connection string's own `options` would override.
 */
export class PostgresSearchIndex implements SearchIndex, PassageVectorWriter {
  private readonly pool: pg.Pool;
  private readonly tables: PostgresTables;
  private readonly vectors: VectorCache;
  private readonly postings: PostingsLoader;
  private migrated: Promise<void> | undefined;
  private closed = false;

  constructor(options: PostgresSearchIndexOptions) {
    this.tables = postgresTables(options.schema ?? "locus_search");
    this.vectors = vectorCacheOf(options);
    this.pool = searchIndexPool(options.connectionString, options.poolSize);
    this.postings = new PostingsLoader(
      this.pool,
      this.tables,
      {
        cacheBytes: options.postingsCacheBytes ?? 128 * 1024 * 1024,
        loadInBackground: options.loadPostingsInBackground ?? true,
        onLoaded: options.onPostingsLoaded,
      },
      () => this.closed,
    );
  }

  async replaceFilePassages(file: IndexedFile, passages: AsyncIterable<IndexedPassage>): Promise<number> {
    await this.ready();
    const client = await this.connect();
    try {
      const count = await replaceFile(client, this.tables, file, passages);
      client.release();
      return count;
    } catch (err) {
      await rollbackAndRelease(client);
      throw unavailableIfDown(err);
    }
  }

  /** Each file's passages replaced in turn: searches see every other file throughout. */
  rebuild(source: AsyncIterable<FilePassages>): Promise<{ files: number; passages: number }> {
    return replaceEachFile(this, source);
  }

  async deleteFilePassages(file: FileRef): Promise<void> {
    await this.ready();
    const client = await this.connect();
    try {
      await deleteFile(client, this.tables, file);
      client.release();
    } catch (err) {
      await rollbackAndRelease(client);
      throw unavailableIfDown(err);
    }
  }

  async passagesWithoutVector(query: MissingVectorQuery): Promise<PassageToEncode[]> {
    if (!VECTOR_SLOTS.includes(query.slot)) return [];
    await this.ready();
    try {
      return await rowsWithoutVector(this.pool, this.tables, query);
    } catch (err) {
      throw unavailableIfDown(err);
    }
  }

  async setPassageVectors(
    file: FileRef,
    slot: VectorSlot,
    space: string,
    vectors: readonly EncodedPassage[],
  ): Promise<number> {
    if (vectors.length === 0) return 0;
    await this.ready();
    const client = await this.connect();
    try {
      const stored = await setVectors(client, this.tables, file, slot, space, vectors);
      client.release();
      return stored;
    } catch (err) {
      await rollbackAndRelease(client);
      throw unavailableIfDown(err);
    }
  }

  async search(query: {
    userId: string;
    text: string;
    limit: number;
    filter?: FileFilter;
  }): Promise<PassageHit[]> {
    const terms = queryTerms(query.text);
    if (terms.length === 0) return [];
    const conditions = filterConditions(query.filter);
    if (conditions && matchesNothingHere(conditions)) return [];
    await this.ready();
    const limit = Math.max(0, Math.floor(query.limit));
    if (conditions) {
      try {
        return await this.filteredSearch(query.userId, terms, limit, conditions);
      } catch (err) {
        throw unavailableIfDown(err);
      }
    }
    const best = (postings: UserPostings) =>
      postings.top(terms, limit).map((b) => ({ id: b.id, score: normaliseScore(b.score) }));
    // Scored first from the postings held, then checked: the statement that reads the winners also
    // reads the user's generation, and only if that moved are the postings caught up and the query
    // scored again. One round trip instead of two when nothing changed (most searches).
    const held = this.postings.held(query.userId);
    if (held) {
      const scoredAt = held.generation;
      const { generation, hits } = await passagesById(this.pool, this.tables, query.userId, best(held));
      if (generation === scoredAt) return hits;
    }
    const postings = await this.postings.postingsOf(query.userId);
    if (postings) return (await passagesById(this.pool, this.tables, query.userId, best(postings))).hits;
    return searchInSql(this.pool, this.tables, query.userId, terms, limit);
  }

  /** Resolves when every user's approximate vector index has caught up with their vectors (tests, benchmarks). */
  approximateIndexesSettled(): Promise<void> {
    return this.vectors.approximateIndexesSettled();
  }

  async vectorSearch(query: VectorQuery): Promise<PassageHit[]> {
    const { userId, slot, space } = query;
    if (query.limit <= 0 || !VECTOR_SLOTS.includes(slot)) return [];
    const conditions = filterConditions(query.filter);
    if (conditions && matchesNothingHere(conditions)) return [];
    await this.ready();
    try {
      // With a filter, the files that pass it come with the generation (one statement), so the
      // matrix scanned is of the same passages the filter was read against.
      const passing = conditions ? await passingFiles(this.pool, this.tables, userId, conditions) : undefined;
      if (passing?.files.size === 0) return [];
      const nearest = await this.vectors.nearest(
        JSON.stringify([userId, slot, space]),
        passing?.generation ?? (await generationOf(this.pool, this.tables, userId)),
        async () => {
          const { rows } = await this.pool.query<{ id: string; bytes: Buffer; fileId: string }>(
            `SELECT id, file_id AS "fileId", ${slot}_vector AS bytes FROM ${this.tables.passages}
             WHERE user_id = $1 AND ${slot}_space = $2 AND ${slot}_vector IS NOT NULL ORDER BY id`,
            [userId, space],
          );
          return VectorMatrix.fromRows(rows, query.vector.length);
        },
        { vector: query.vector, k: query.limit, onlyFiles: passing?.files },
      );
      const { hits } = await passagesById(
        this.pool,
        this.tables,
        userId,
        nearest.map((n) => ({ id: n.id, score: Math.max(0, n.score) })),
      );
      return hits;
    } catch (err) {
      throw unavailableIfDown(err);
    }
  }

  /**
   * Quick search with a filter. The files that pass it are read with the user's generation; the
   * user's postings, when held at that generation, are scored only over those files. Otherwise
   * (postings not in memory, or changed between the two reads) the SQL scores it, the filter in
   * its WHERE. Either way the filter comes before the best `limit` are taken.
   */
  private async filteredSearch(
    userId: string,
    terms: readonly string[],
    limit: number,
    conditions: FilterConditions,
  ): Promise<PassageHit[]> {
    const postings = this.postings.held(userId) ?? (await this.postings.postingsOf(userId));
    if (postings) {
      const passing = await passingFiles(this.pool, this.tables, userId, conditions);
      if (passing.files.size === 0) return [];
      const current =
        postings.generation === passing.generation ? postings : await this.postings.postingsOf(userId);
      if (current?.generation === passing.generation) {
        const best = current
          .top(terms, limit, passing.files)
          .map((b) => ({ id: b.id, score: normaliseScore(b.score) }));
        const read = await passagesById(this.pool, this.tables, userId, best);
        if (read.generation === passing.generation) return read.hits;
      }
    }
    return searchInSql(this.pool, this.tables, userId, terms, limit, conditions);
  }

  async passagesInRanges(query: { userId: string; ranges: readonly PassageRange[] }): Promise<PassageHit[]> {
    const ranges = boundedRanges(query.ranges);
    if (ranges.length === 0) return [];
    await this.ready();
    try {
      // One round trip for every range; each is a scan of the unique (user_id, file_id, ord) key.
      const { rows } = await this.pool.query<PassageRow>(
        `SELECT p.id, p.file_id, p.ord, p.content, p.locator
         FROM ${this.tables.passages} AS p
         JOIN unnest($2::text[], $3::int[], $4::int[]) AS r(file_id, lo, hi)
           ON p.file_id = r.file_id AND p.ord BETWEEN r.lo AND r.hi
         WHERE p.user_id = $1`,
        [query.userId, ranges.map((r) => r.fileId), ranges.map((r) => r.from), ranges.map((r) => r.to)],
      );
      return inRangeOrder(
        ranges,
        rows.map((r) => hitOf(r, 0)),
      );
    } catch (err) {
      throw unavailableIfDown(err);
    }
  }

  async check(): Promise<void> {
    await this.ready();
    try {
      await this.pool.query("SELECT 1");
    } catch (err) {
      throw unavailableIfDown(err);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.vectors.close();
    await this.pool.end();
  }

  private async connect(): Promise<pg.PoolClient> {
    try {
      return await this.pool.connect();
    } catch (err) {
      throw unavailableIfDown(err);
    }
  }

  /** Creates the schema once per instance; a failure (Postgres down) is retried on the next call. */
  private ready(): Promise<void> {
    this.migrated ??= migrate(this.pool, this.tables).catch((err: unknown) => {
      this.migrated = undefined;
      throw unavailableIfDown(err);
    });
    return this.migrated;
  }
}
