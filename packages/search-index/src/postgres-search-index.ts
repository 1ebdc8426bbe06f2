import { types } from "node:util";
import pg from "pg";
import { LocusError, type Locator } from "@locus/contracts";
import {
  boundedRanges,
  indexTerms,
  inRangeOrder,
  normaliseScore,
  queryTerms,
  replaceEachFile,
  type FilePassages,
  type FileRef,
  type IndexedPassage,
  type PassageHit,
  type PassageRange,
  type SearchIndex,
  type VectorQuery,
} from "./search-index.ts";
import { VectorCache, VectorMatrix, vectorBytes } from "./vector-matrix.ts";
import { BM25_B, BM25_IDF_FLOOR, BM25_K1 } from "./bm25.ts";
import { PostingsCache, UserPostings, type PostingsFile, type ScoredId } from "./postings.ts";

export interface PostgresSearchIndexOptions {
  connectionString: string;
  /**
   * Where the index keeps its table and text-search configuration; created if missing. Lower-case
   * letters, digits and underscores, so it never needs quoting. Default `locus_search`.
   */
  schema?: string;
  /** Connections kept open (default 10). A replacement holds one while its stream lasts. */
  poolSize?: number;
  /** Memory for users' vectors kept between ai searches, per process (default 256 MB). */
  vectorCacheBytes?: number;
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

/** A user's postings read in full: how many passages, how long it took, whether the cache kept them. */
export interface PostingsLoaded {
  userId: string;
  passages: number;
  bytes: number;
  ms: number;
  kept: boolean;
}

type PassageRow = { id: string; file_id: string; ord: number; content: string; locator: Locator };
type PostingsDbRow = {
  file_id: string;
  id: string;
  term_count: number;
  terms: string;
  repeats: Record<string, number> | null;
};

/** Passages per INSERT, and a cap on their text, so memory stays flat whatever the file's size. */
const BATCH_ROWS = 500;
const BATCH_CHARS = 2_000_000;

/** Passages added to a first load of a user's postings between two turns of the event loop. */
const LOAD_SLICE_PASSAGES = 5_000;

/** Readiness probes must answer quickly; a dead host should not hold a request for a minute. */
const CONNECT_TIMEOUT_MS = 2_000;

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

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
export class PostgresSearchIndex implements SearchIndex {
  private readonly pool: pg.Pool;
  private readonly schema: string;
  private readonly passages: string;
  private readonly generations: string;
  private readonly termStats: string;
  private readonly userStats: string;
  private readonly indexedFiles: string;
  private readonly vectors: VectorCache;
  private readonly postings: PostingsCache;
  private readonly loadPostingsInBackground: boolean;
  private readonly onPostingsLoaded: ((loaded: PostingsLoaded) => void) | undefined;
  /** Each user's load or refresh of postings under way: concurrent searches share it. */
  private readonly refreshing = new Map<string, Promise<UserPostings | undefined>>();
  private migrated: Promise<void> | undefined;
  private closed = false;

  constructor(options: PostgresSearchIndexOptions) {
    this.schema = options.schema ?? "locus_search";
    if (!SCHEMA_NAME.test(this.schema)) {
      throw new Error(
        `Search index schema ${JSON.stringify(this.schema)} must be lower-case letters, digits and underscores.`,
      );
    }
    this.passages = `${this.schema}.passages`;
    this.generations = `${this.schema}.vector_generations`;
    this.termStats = `${this.schema}.term_stats`;
    this.userStats = `${this.schema}.user_stats`;
    this.indexedFiles = `${this.schema}.indexed_files`;
    this.vectors = new VectorCache(options.vectorCacheBytes ?? 256 * 1024 * 1024);
    this.postings = new PostingsCache(options.postingsCacheBytes ?? 128 * 1024 * 1024);
    this.loadPostingsInBackground = options.loadPostingsInBackground ?? true;
    this.onPostingsLoaded = options.onPostingsLoaded;
    this.pool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      idleTimeoutMillis: 30_000,
      keepAlive: true,
      application_name: "locus-search-index",
    });
    // An idle connection that dies (Postgres restarted) is dropped by the pool and the next query
    // opens a new one; without a listener the 'error' event would crash the process.
    this.pool.on("error", () => undefined);
  }

  async replaceFilePassages(file: FileRef, passages: AsyncIterable<IndexedPassage>): Promise<number> {
    await this.ready();
    const client = await this.connect();
    try {
      // One transaction: readers keep seeing the old set (MVCC) until COMMIT shows the new one.
      // The per-file lock makes two replacements of one file (a redelivered message racing the
      // original) take turns; without it both would delete the same old rows and insert two sets.
      await client.query("BEGIN");
      await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [this.fileLockKey(file)]);
      const removed = await this.removeFile(client, file);
      let count = 0;
      let batch: PassageTerms[] = [];
      let chars = 0;
      for await (const passage of passages) {
        batch.push({ ...termsOf(passage.content), passage });
        chars += passage.content.length;
        if (batch.length >= BATCH_ROWS || chars >= BATCH_CHARS) {
          await this.insert(client, file, batch, count);
          count += batch.length;
          batch = [];
          chars = 0;
        }
      }
      await this.insert(client, file, batch, count);
      count += batch.length;
      const generation = await this.bumpGeneration(client, file.userId);
      await client.query(
        `INSERT INTO ${this.indexedFiles} (user_id, file_id, version) VALUES ($1, $2, $3)
         ON CONFLICT (user_id, file_id) DO UPDATE SET version = excluded.version`,
        [file.userId, file.fileId, generation],
      );
      await this.applyStatistics(client, file, removed);
      await client.query("COMMIT");
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
      // Takes the replacement's lock, so a delete that arrives while the file is being re-indexed
      // waits for it and then removes the new set too, instead of missing rows it could not see.
      await client.query("BEGIN");
      await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [this.fileLockKey(file)]);
      const removed = await this.removeFile(client, file);
      await this.bumpGeneration(client, file.userId);
      await client.query(`DELETE FROM ${this.indexedFiles} WHERE user_id = $1 AND file_id = $2`, [
        file.userId,
        file.fileId,
      ]);
      await this.applyStatistics(client, file, removed);
      await client.query("COMMIT");
      client.release();
    } catch (err) {
      await rollbackAndRelease(client);
      throw unavailableIfDown(err);
    }
  }

  async search(query: { userId: string; text: string; limit: number }): Promise<PassageHit[]> {
    const terms = queryTerms(query.text);
    if (terms.length === 0) return [];
    await this.ready();
    const limit = Math.max(0, Math.floor(query.limit));
    const best = (postings: UserPostings) =>
      postings.top(terms, limit).map((b) => ({ id: b.id, score: normaliseScore(b.score) }));
    // Scored first from the postings held, then checked: the statement that reads the winners also
    // reads the user's generation, and only if that moved are the postings caught up and the query
    // scored again. One round trip instead of two when nothing changed (most searches).
    const held = this.postings.enabled ? this.postings.get(query.userId) : undefined;
    if (held) {
      const scoredAt = held.generation;
      const { generation, hits } = await this.passagesById(query.userId, best(held));
      if (generation === scoredAt) return hits;
    }
    const postings = await this.postingsOf(query.userId);
    if (postings) return (await this.passagesById(query.userId, best(postings))).hits;
    // Passages with any of the terms (alternatives, like the other backends), found through the GIN
    // index, each scored with BM25 (see bm25.ts). One statement: the user's statistics (`s`) and
    // each term's idf (`q`) are read in the same snapshot as the passages. A term's frequency in a
    // passage is 0 without it, else its count in `repeats`, else 1. Every term is a bound
    // parameter; they hold only letters, marks and digits, and are quoted as lexemes besides.
    // Ties keep insertion order, so results are stable.
    const frequency = (i: number) =>
      `(CASE WHEN p.tsv @@ $${5 + i}::tsquery THEN coalesce((p.repeats ->> $${5 + terms.length + i}::text)::int, 1) ELSE 0 END)::float8`;
    const norm = `${BM25_K1}::float8 * (${1 - BM25_B}::float8 + ${BM25_B}::float8 * p.term_count / s.avg_length)`;
    const score = terms
      .map(
        (_, i) => `q.idf[${i + 1}] * ${frequency(i)} * ${BM25_K1 + 1}::float8 / (${frequency(i)} + ${norm})`,
      )
      .join(" + ");
    const sql = `
      WITH s AS (
        SELECT passages::float8 AS total, greatest(terms::float8 / greatest(passages, 1), 1e-9) AS avg_length
        FROM ${this.userStats} WHERE user_id = $1
      ), q AS (
        SELECT array_agg(greatest(ln((greatest(s.total - coalesce(t.passages, 0), 0) + 0.5)
                                     / (coalesce(t.passages, 0) + 0.5)), ${BM25_IDF_FLOOR}::float8)
                         ORDER BY x.i) AS idf
        FROM s CROSS JOIN unnest($4::text[]) WITH ORDINALITY AS x(term, i)
        LEFT JOIN ${this.termStats} AS t ON t.user_id = $1 AND t.term = x.term
      )
      SELECT p.id, p.file_id, p.ord, p.content, p.locator, ${score} AS rank
      FROM ${this.passages} AS p, s, q
      WHERE p.user_id = $1 AND p.tsv @@ $2::tsquery
      ORDER BY rank DESC, p.id
      LIMIT $3`;
    try {
      const { rows } = await this.pool.query<PassageRow & { rank: number }>(sql, [
        query.userId,
        terms.map(lexeme).join(" | "),
        limit,
        terms,
        ...terms.map(lexeme),
        ...terms,
      ]);
      return rows.map((r) => hitOf(r, normaliseScore(r.rank)));
    } catch (err) {
      throw unavailableIfDown(err);
    }
  }

  async vectorSearch(query: VectorQuery): Promise<PassageHit[]> {
    const { userId, slot, space } = query;
    if (query.limit <= 0 || !VECTOR_SLOTS.includes(slot)) return [];
    await this.ready();
    try {
      const matrix = await this.vectors.get(
        JSON.stringify([userId, slot, space]),
        await this.generationOf(userId),
        async () => {
          const { rows } = await this.pool.query<{ id: string; bytes: Buffer }>(
            `SELECT id, ${slot}_vector AS bytes FROM ${this.passages}
             WHERE user_id = $1 AND ${slot}_space = $2 AND ${slot}_vector IS NOT NULL ORDER BY id`,
            [userId, space],
          );
          return VectorMatrix.fromRows(rows, query.vector.length);
        },
      );
      const nearest = matrix.nearest(query.vector, query.limit);
      const { hits } = await this.passagesById(
        userId,
        nearest.map((n) => ({ id: n.id, score: Math.max(0, n.score) })),
      );
      return hits;
    } catch (err) {
      throw unavailableIfDown(err);
    }
  }

  /** The user's generation: a counter bumped in every transaction that changes their passages. */
  private async generationOf(userId: string): Promise<string> {
    const { rows } = await this.pool.query<{ generation: string }>(
      `SELECT generation FROM ${this.generations} WHERE user_id = $1`,
      [userId],
    );
    return rows[0]?.generation ?? "0";
  }

  /**
   * The user's postings in memory, up to date with their passages; undefined where the search is
   * to be scored in SQL instead: the cache is off, the user does not fit it, or their postings are
   * still loading (a first search in this process, unless told to wait). Once loaded, a change to
   * the user's passages is caught up before the search, reading only the files that changed.
   */
  private async postingsOf(userId: string): Promise<UserPostings | undefined> {
    if (!this.postings.enabled) return undefined;
    const kept = this.postings.get(userId);
    try {
      if (kept)
        return kept.generation === (await this.generationOf(userId)) ? kept : await this.refresh(userId);
      if (!this.postings.mayLoad(userId)) return undefined;
      const load = this.refresh(userId);
      if (!this.loadPostingsInBackground) return await load;
      // The SQL answers meanwhile; a failed load is tried again by a later search.
      load.catch(() => undefined);
      return undefined;
    } catch (err) {
      throw unavailableIfDown(err);
    }
  }

  /**
   * Reads, in one snapshot, the user's generation, their files' versions and the passages of every
   * file not held at its version, and applies them to the user's postings (new ones if none are
   * held). One at a time per user.
   */
  private refresh(userId: string): Promise<UserPostings | undefined> {
    const under = this.refreshing.get(userId);
    if (under) return under;
    const work = (async () => {
      const started = performance.now();
      const client = await this.pool.connect();
      let files: PostingsFile[];
      let removed: string[];
      let generation: string;
      const held = this.postings.get(userId);
      try {
        await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
        const current = await client.query<{ generation: string }>(
          `SELECT generation FROM ${this.generations} WHERE user_id = $1`,
          [userId],
        );
        generation = current.rows[0]?.generation ?? "0";
        const versions = await client.query<{ file_id: string; version: string }>(
          `SELECT file_id, version FROM ${this.indexedFiles} WHERE user_id = $1`,
          [userId],
        );
        const now = new Map(versions.rows.map((r) => [r.file_id, r.version]));
        const before = held?.versions() ?? new Map<string, string>();
        removed = [...before.keys()].filter((fileId) => !now.has(fileId));
        const changed = [...now].filter(([fileId, version]) => before.get(fileId) !== version);
        const { rows } =
          changed.length === 0
            ? { rows: [] }
            : await client.query<PostingsDbRow>(
                `SELECT file_id, id, term_count, array_to_string(tsvector_to_array(tsv), ' ') AS terms, repeats
                 FROM ${this.passages}
                 WHERE user_id = $1 ${held ? "AND file_id = ANY($2::text[])" : ""}
                 ORDER BY file_id, ord`,
                held ? [userId, changed.map(([fileId]) => fileId)] : [userId],
              );
        await client.query("COMMIT");
        client.release();
        files = changed.map(([fileId, version]) => ({ fileId, version, rows: [] }));
        const byId = new Map(files.map((f) => [f.fileId, f.rows as PostingsFile["rows"][number][]]));
        for (const row of rows) {
          byId.get(row.file_id)?.push({
            id: String(row.id),
            termCount: row.term_count,
            terms: row.terms === "" ? [] : row.terms.split(" "),
            repeats: row.repeats,
          });
        }
      } catch (err) {
        await rollbackAndRelease(client);
        throw err;
      }
      if (held) {
        held.apply(generation, removed, files);
        return this.postings.keep(userId, held) ? held : undefined;
      }
      // A first load is built a few thousand passages at a time, letting other searches run between:
      // it is not seen by any search until kept.
      const postings = new UserPostings();
      for (let from = 0; from < files.length;) {
        let to = from;
        for (let passages = 0; to < files.length && passages < LOAD_SLICE_PASSAGES; to++) {
          passages += files[to]!.rows.length;
        }
        postings.apply(generation, [], files.slice(from, to));
        from = to;
        await new Promise((resolve) => setImmediate(resolve));
        if (this.closed) return undefined; // shutting down: nothing will search these
      }
      postings.apply(generation, [], []);
      const kept = this.postings.keep(userId, postings);
      this.onPostingsLoaded?.({
        userId,
        passages: postings.passageCount(),
        bytes: postings.bytes(),
        ms: Math.round(performance.now() - started),
        kept,
      });
      return kept ? postings : undefined;
    })();
    this.refreshing.set(userId, work);
    void work.then(
      () => this.refreshing.delete(userId),
      () => this.refreshing.delete(userId),
    );
    return work;
  }

  /**
   * The passages of `best`, in its order, with its scores, and the user's generation read in the
   * same snapshot. A passage replaced since `best` was chosen (in memory) is left out rather than
   * shown stale.
   */
  private async passagesById(
    userId: string,
    best: readonly ScoredId[],
  ): Promise<{ generation: string; hits: PassageHit[] }> {
    try {
      // A join on the primary key, not `id = ANY(...) AND user_id = ...`: with the latter the planner
      // may AND the user's whole posting list from the GIN index with the ids (20 ms at 100k). The
      // generation row comes with no passage when none is asked for or found.
      const { rows } = await this.pool.query<{ generation: string } & Partial<PassageRow>>(
        `SELECT g.generation, p.id, p.file_id, p.ord, p.content, p.locator
         FROM (SELECT coalesce((SELECT generation FROM ${this.generations} WHERE user_id = $1), 0)::text
                 AS generation) AS g
         LEFT JOIN LATERAL (
           SELECT p.id, p.file_id, p.ord, p.content, p.locator
           FROM unnest($2::bigint[]) AS w(id) JOIN ${this.passages} AS p ON p.id = w.id
           WHERE p.user_id = $1
         ) AS p ON true`,
        [userId, best.map((b) => b.id)],
      );
      const byId = new Map(rows.flatMap((r) => (r.id == null ? [] : [[String(r.id), r as PassageRow]])));
      const hits = best.flatMap((b) => {
        const row = byId.get(b.id);
        return row ? [hitOf(row, b.score)] : [];
      });
      return { generation: rows[0]?.generation ?? "0", hits };
    } catch (err) {
      throw unavailableIfDown(err);
    }
  }

  async passagesInRanges(query: { userId: string; ranges: readonly PassageRange[] }): Promise<PassageHit[]> {
    const ranges = boundedRanges(query.ranges);
    if (ranges.length === 0) return [];
    await this.ready();
    try {
      // One round trip for every range; each is a scan of the unique (user_id, file_id, ord) key.
      const { rows } = await this.pool.query<PassageRow>(
        `SELECT p.id, p.file_id, p.ord, p.content, p.locator
         FROM ${this.passages} AS p
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
    await this.pool.end();
  }

  private fileLockKey(file: FileRef): string {
    return JSON.stringify(["locus-search-index", this.schema, file.userId, file.fileId]);
  }

  /** Marks the user's passages changed (inside the transaction that changes them); the new generation. */
  private async bumpGeneration(client: pg.PoolClient, userId: string): Promise<string> {
    const { rows } = await client.query<{ generation: string }>(
      `INSERT INTO ${this.generations} (user_id, generation) VALUES ($1, 1)
       ON CONFLICT (user_id) DO UPDATE SET generation = ${this.generations}.generation + 1
       RETURNING generation`,
      [userId],
    );
    return rows[0]!.generation;
  }

  /**
   * Deletes the file's passages (inside the transaction that replaces or deletes it) and returns
   * what they counted in the user's statistics, to be taken off by applyStatistics.
   */
  private async removeFile(client: pg.PoolClient, file: FileRef): Promise<RemovedCounts> {
    const perTerm = await client.query<{ terms: string[] | null; counts: number[] | null }>(
      `SELECT array_agg(term) AS terms, array_agg(n) AS counts FROM (
         SELECT t.term, count(*)::int AS n
         FROM ${this.passages} AS p CROSS JOIN unnest(tsvector_to_array(p.tsv)) AS t(term)
         WHERE p.user_id = $1 AND p.file_id = $2 GROUP BY t.term) AS c`,
      [file.userId, file.fileId],
    );
    const removed = await client.query<{ passages: number; terms: string }>(
      `WITH gone AS (DELETE FROM ${this.passages} WHERE user_id = $1 AND file_id = $2 RETURNING term_count)
       SELECT count(*)::int AS passages, coalesce(sum(term_count), 0)::bigint AS terms FROM gone`,
      [file.userId, file.fileId],
    );
    return {
      passages: removed.rows[0]?.passages ?? 0,
      terms: Number(removed.rows[0]?.terms ?? 0),
      perTerm: { terms: perTerm.rows[0]?.terms ?? [], counts: perTerm.rows[0]?.counts ?? [] },
    };
  }

  /**
   * Brings the user's statistics up to date with the file's passages as they now stand (none after
   * a delete), less what `removed` counted. The counting is Postgres's, over the file's new rows;
   * the terms are written in one order (sorted by the statement), so two transactions changing
   * the same user's terms wait for each other instead of deadlocking.
   */
  private async applyStatistics(client: pg.PoolClient, file: FileRef, removed: RemovedCounts): Promise<void> {
    await client.query(
      `INSERT INTO ${this.termStats} AS s (user_id, term, passages)
       SELECT $1, d.term, sum(d.delta) FROM (
         SELECT t.term, count(*)::int AS delta
         FROM ${this.passages} AS p CROSS JOIN unnest(tsvector_to_array(p.tsv)) AS t(term)
         WHERE p.user_id = $1 AND p.file_id = $2 GROUP BY t.term
         UNION ALL
         SELECT o.term, -o.n FROM unnest($3::text[], $4::int[]) AS o(term, n)
       ) AS d
       GROUP BY d.term HAVING sum(d.delta) <> 0 ORDER BY d.term
       ON CONFLICT (user_id, term) DO UPDATE SET passages = s.passages + excluded.passages`,
      [file.userId, file.fileId, removed.perTerm.terms, removed.perTerm.counts],
    );
    if (removed.perTerm.terms.length > 0) {
      await client.query(
        `DELETE FROM ${this.termStats} WHERE user_id = $1 AND term = ANY($2::text[]) AND passages <= 0`,
        [file.userId, removed.perTerm.terms],
      );
    }
    await client.query(
      `INSERT INTO ${this.userStats} AS s (user_id, passages, terms)
       SELECT $1, count(*) - $3::bigint, coalesce(sum(term_count), 0) - $4::bigint
       FROM ${this.passages} WHERE user_id = $1 AND file_id = $2
       ON CONFLICT (user_id) DO UPDATE SET passages = s.passages + excluded.passages, terms = s.terms + excluded.terms`,
      [file.userId, file.fileId, removed.passages, removed.terms],
    );
    await client.query(`DELETE FROM ${this.userStats} WHERE user_id = $1 AND passages <= 0`, [file.userId]);
  }

  private async insert(
    client: pg.PoolClient,
    file: FileRef,
    batch: readonly PassageTerms[],
    from: number,
  ): Promise<void> {
    if (batch.length === 0) return;
    const vectors = (slot: (typeof VECTOR_SLOTS)[number]) => [
      batch.map(({ passage }) => passage.vectors?.[slot]?.space ?? null),
      batch.map(({ passage }) => {
        const v = passage.vectors?.[slot];
        return v ? vectorBytes(v.vector) : null;
      }),
    ];
    // One statement per batch whatever its size: arrays instead of a placeholder per value, so a
    // batch never nears the protocol's 65,535-parameter limit.
    await client.query(
      `INSERT INTO ${this.passages}
         (user_id, file_id, ord, content, locator, tsv, term_count, repeats,
          local_space, local_vector, remote_space, remote_vector)
       SELECT $1, $2, t.ord, t.content, t.locator::json, t.tsv::tsvector, t.term_count, t.repeats::jsonb,
              t.local_space, t.local_vector, t.remote_space, t.remote_vector
       FROM unnest($3::int[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[],
                   $9::text[], $10::bytea[], $11::text[], $12::bytea[])
         AS t(ord, content, locator, tsv, term_count, repeats, local_space, local_vector, remote_space, remote_vector)`,
      [
        file.userId,
        file.fileId,
        batch.map((_, i) => from + i),
        // Postgres text cannot hold NUL, which PDF text layers sometimes carry; dropping it keeps
        // the file indexable instead of failing it over an invisible character.
        batch.map(({ passage }) => passage.content.replaceAll("\u0000", "")),
        batch.map(({ passage }) => JSON.stringify(passage.locator)),
        batch.map((p) => p.tsv),
        batch.map((p) => p.count),
        batch.map((p) => p.repeats),
        ...vectors("local"),
        ...vectors("remote"),
      ],
    );
  }

  private async connect(): Promise<pg.PoolClient> {
    try {
      return await this.pool.connect();
    } catch (err) {
      throw unavailableIfDown(err);
    }
  }

  /** Every passage's terms made again from its content (a migration, inside its transaction). */
  private async remakeTerms(client: pg.PoolClient): Promise<void> {
    for (let last = "0"; ;) {
      const { rows } = await client.query<{ id: string; content: string }>(
        `SELECT id, content FROM ${this.passages} WHERE id > $1 ORDER BY id LIMIT 1000`,
        [last],
      );
      if (rows.length === 0) return;
      const terms = rows.map((r) => termsOf(r.content));
      await client.query(
        `UPDATE ${this.passages} AS p SET tsv = t.tsv::tsvector, term_count = t.term_count, repeats = t.repeats::jsonb
         FROM unnest($1::bigint[], $2::text[], $3::int[], $4::text[]) AS t(id, tsv, term_count, repeats)
         WHERE p.id = t.id`,
        [
          rows.map((r) => r.id),
          terms.map((t) => t.tsv),
          terms.map((t) => t.count),
          terms.map((t) => t.repeats),
        ],
      );
      last = rows[rows.length - 1]!.id;
    }
  }

  /** Creates the schema once per instance; a failure (Postgres down) is retried on the next call. */
  private ready(): Promise<void> {
    this.migrated ??= this.migrate().catch((err: unknown) => {
      this.migrated = undefined;
      throw unavailableIfDown(err);
    });
    return this.migrated;
  }

  private async migrate(): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN");
      // The indexer and search processes start together; one at a time, or CREATE ... IF NOT
      // EXISTS races into duplicate-key errors in the catalog. The key is database-wide because
      // CREATE EXTENSION is.
      await client.query("SELECT pg_advisory_xact_lock(hashtextextended('locus-search-index:migrate', 0))");
      const exists = async (sql: string, params: unknown[]) =>
        (await client.query<{ found: boolean }>(`SELECT EXISTS (${sql}) AS found`, params)).rows[0]?.found ===
        true;

      // Checked first: CREATE SCHEMA IF NOT EXISTS needs CREATE on the database even when the
      // schema is already there, which an operator's least-privilege role may not have.
      if (!(await exists("SELECT 1 FROM pg_namespace WHERE nspname = $1", [this.schema]))) {
        await client.query(`CREATE SCHEMA ${this.schema}`);
      }

      let composite = await exists("SELECT 1 FROM pg_extension WHERE extname = 'btree_gin'", []);
      if (!composite) {
        // btree_gin is trusted (PG 13+), so a database owner may install it too. It goes to
        // `public`, never into this schema: dropping this schema must not drop an extension other
        // schemas' indexes use. Where it cannot be installed, the plain layout below still works.
        await client.query("SAVEPOINT btree_gin");
        try {
          await client.query("CREATE EXTENSION IF NOT EXISTS btree_gin WITH SCHEMA public");
          await client.query("RELEASE SAVEPOINT btree_gin");
          composite = true;
        } catch {
          await client.query("ROLLBACK TO SAVEPOINT btree_gin");
        }
      }

      const missing = async (name: string) =>
        !(await exists("SELECT 1 WHERE to_regclass($1) IS NOT NULL", [`${this.schema}.${name}`]));

      // Each object is looked up before it is created: CREATE INDEX IF NOT EXISTS takes a SHARE lock
      // on the table before it finds the index there, so a search process starting while the
      // indexer streams a long replacement would wait for that replacement to commit.
      if (await missing("passages")) {
        // user_id and file_id are text, not uuid: the port treats ids as opaque strings, and a uuid
        // column would make an upper-case spelling of a user's id that same user. The locator is
        // json, not jsonb: it is never queried inside, and json gives it back exactly as given
        // (jsonb reorders keys, which would change API responses between the two shapes).
        // The unique key serves replace and delete by file, and is a last guard against duplicates.
        await client.query(`
          CREATE TABLE ${this.passages} (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            user_id text NOT NULL,
            file_id text NOT NULL,
            ord integer NOT NULL,
            content text NOT NULL,
            locator json NOT NULL,
            tsv tsvector NOT NULL,
            term_count integer NOT NULL,
            repeats jsonb,
            local_space text,
            local_vector bytea,
            remote_space text,
            remote_vector bytea,
            CONSTRAINT passages_file_ord_key UNIQUE (user_id, file_id, ord)
          )`);
      }
      // Tables made before ai mode: the vector columns come NULL until `locus index rebuild`.
      const columns = await client.query<{ column_name: string }>(
        `SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'passages'`,
        [this.schema],
      );
      const have = new Set(columns.rows.map((c) => c.column_name));
      for (const slot of VECTOR_SLOTS) {
        if (!have.has(`${slot}_vector`)) {
          await client.query(
            `ALTER TABLE ${this.passages} ADD COLUMN IF NOT EXISTS ${slot}_space text,
                                          ADD COLUMN IF NOT EXISTS ${slot}_vector bytea`,
          );
        }
      }
      // Indexes made before terms were made in JavaScript had Postgres stem them (a text-search
      // configuration of the schema's own), and those made before BM25 kept no term counts: their
      // terms are made again from the passages' text, and the configuration dropped.
      const configured = await exists(
        `SELECT 1 FROM pg_ts_config c JOIN pg_namespace n ON n.oid = c.cfgnamespace
         WHERE n.nspname = $1 AND c.cfgname = 'locus_english'`,
        [this.schema],
      );
      const uncounted = !have.has("term_count");
      if (uncounted) {
        await client.query(
          `ALTER TABLE ${this.passages} ADD COLUMN term_count integer, ADD COLUMN repeats jsonb`,
        );
      }
      if (configured || uncounted) await this.remakeTerms(client);
      if (uncounted) await client.query(`ALTER TABLE ${this.passages} ALTER COLUMN term_count SET NOT NULL`);
      if (configured) {
        await client.query(`
          DROP TEXT SEARCH CONFIGURATION ${this.schema}.locus_english;
          DROP TEXT SEARCH DICTIONARY ${this.schema}.locus_english_stem;`);
      }
      if (await missing("vector_generations")) {
        await client.query(
          `CREATE TABLE ${this.generations} (user_id text PRIMARY KEY, generation bigint NOT NULL)`,
        );
      }
      // BM25's statistics, counted from the passages when first made or when their terms were made
      // again; from then on each transaction that changes passages changes them (applyStatistics).
      const uncountedStats = (await missing("term_stats")) || (await missing("user_stats"));
      if (uncountedStats) {
        await client.query(`
          CREATE TABLE IF NOT EXISTS ${this.termStats} (
            user_id text NOT NULL,
            term text NOT NULL,
            passages integer NOT NULL,
            PRIMARY KEY (user_id, term)
          );
          CREATE TABLE IF NOT EXISTS ${this.userStats} (
            user_id text PRIMARY KEY,
            passages bigint NOT NULL,
            terms bigint NOT NULL
          )`);
      }
      if (uncountedStats || configured || uncounted) {
        await client.query(`
          DELETE FROM ${this.termStats};
          DELETE FROM ${this.userStats};
          INSERT INTO ${this.termStats} (user_id, term, passages)
            SELECT p.user_id, t.term, count(*) FROM ${this.passages} AS p
            CROSS JOIN unnest(tsvector_to_array(p.tsv)) AS t(term) GROUP BY p.user_id, t.term;
          INSERT INTO ${this.userStats} (user_id, passages, terms)
            SELECT user_id, count(*), sum(term_count) FROM ${this.passages} GROUP BY user_id`);
      }
      // Each indexed file's version (the user's generation when it was last written), so a search
      // process holding a user's postings in memory reads again only the files that changed.
      if (await missing("indexed_files")) {
        await client.query(`
          CREATE TABLE ${this.indexedFiles} (
            user_id text NOT NULL,
            file_id text NOT NULL,
            version bigint NOT NULL,
            PRIMARY KEY (user_id, file_id)
          );
          INSERT INTO ${this.indexedFiles} (user_id, file_id, version)
            SELECT DISTINCT user_id, file_id, 0 FROM ${this.passages}`);
      }
      const gin = composite ? "passages_user_tsv_idx" : "passages_tsv_idx";
      if ((await missing("passages_user_tsv_idx")) && (await missing("passages_tsv_idx"))) {
        await client.query(
          `CREATE INDEX ${gin} ON ${this.passages} USING gin (${composite ? "user_id, tsv" : "tsv"})`,
        );
      }
      await client.query("COMMIT");
      client.release();
    } catch (err) {
      await rollbackAndRelease(client);
      throw err;
    }
  }
}

/** A term quoted as a tsvector or tsquery lexeme (terms hold no quote or backslash; escaped anyway). */
const lexeme = (term: string) => `'${term.replace(/['\\]/g, "\\$&")}'`;

/** Postgres keeps at most this many positions of one lexeme, and positions up to 16,383. */
const MAX_POSITIONS = 256;
const MAX_POSITION = 16_383;

/** A passage's terms as the table keeps them. */
interface Terms {
  /** Each distinct term with the positions (from 1) it occurs at, as a tsvector literal. */
  tsv: string;
  /** How many terms the passage has, repeats included: its length for BM25. */
  count: number;
  /** The terms it holds more than once, with their counts, as a JSON object; null if none. */
  repeats: string | null;
}

function termsOf(content: string): Terms {
  const terms = indexTerms(content);
  // Per term: how often it occurs, and the first MAX_POSITIONS places.
  const seen = new Map<string, { n: number; at: number[] }>();
  terms.forEach((term, i) => {
    const entry = seen.get(term);
    if (entry === undefined) seen.set(term, { n: 1, at: [Math.min(i + 1, MAX_POSITION)] });
    else if (++entry.n <= MAX_POSITIONS) entry.at.push(Math.min(i + 1, MAX_POSITION));
  });
  let tsv = "";
  let repeats: Record<string, number> | null = null;
  for (const [term, { n, at }] of seen) {
    tsv += `${tsv === "" ? "" : " "}${lexeme(term)}:${at.join(",")}`;
    if (n > 1) (repeats ??= {})[term] = n;
  }
  return { tsv, count: terms.length, repeats: repeats === null ? null : JSON.stringify(repeats) };
}

type PassageTerms = Terms & { passage: IndexedPassage };

/** What a file's passages counted in the user's statistics, before they were deleted. */
interface RemovedCounts {
  passages: number;
  terms: number;
  /** Per term, the file's passages holding it (two arrays of one length). */
  perTerm: { terms: string[]; counts: number[] };
}

const VECTOR_SLOTS = ["local", "remote"] as const;

const hitOf = (row: PassageRow, score: number): PassageHit => ({
  id: String(row.id),
  fileId: row.file_id,
  ord: row.ord,
  content: row.content,
  locator: row.locator,
  score,
});

async function rollbackAndRelease(client: pg.PoolClient): Promise<void> {
  try {
    await client.query("ROLLBACK");
    client.release();
  } catch (err) {
    // The connection is broken: destroy it rather than hand it to the next caller.
    client.release(err instanceof Error ? err : true);
  }
}

const DOWN_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
  "53300", // too_many_connections
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now
]);

/**
 * Postgres being down is an operational state with a status of its own (503, retried by workers),
 * not a bug: say so in words an operator can act on. Other errors pass through unchanged.
 */
function unavailableIfDown(err: unknown): unknown {
  // isNativeError too: socket errors come from Node's own realm, where `instanceof Error` can fail
  // (under jest's VM contexts, for one).
  if (err instanceof LocusError || !(err instanceof Error || types.isNativeError(err))) return err;
  const code = (err as { code?: unknown }).code;
  const down =
    (typeof code === "string" && (DOWN_CODES.has(code) || code.startsWith("08"))) ||
    /timeout exceeded when trying to connect|Connection terminated/i.test(err.message);
  return down
    ? new LocusError(
        "unavailable",
        "The search index database (Postgres) is unreachable; try again shortly.",
        {
          cause: err,
        },
      )
    : err;
}
