import { types } from "node:util";
import pg from "pg";
import { LocusError, type Locator } from "@locus/contracts";
import {
  boundedRanges,
  indexTerms,
  inRangeOrder,
  normaliseScore,
  queryTerms,
  type FileRef,
  type IndexedPassage,
  type PassageHit,
  type PassageRange,
  type SearchIndex,
  type VectorQuery,
} from "./search-index.ts";
import { VectorCache, VectorMatrix, vectorBytes } from "./vector-matrix.ts";

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
}

type PassageRow = { id: string; file_id: string; ord: number; content: string; locator: Locator };

/** Passages per INSERT, and a cap on their text, so memory stays flat whatever the file's size. */
const BATCH_ROWS = 500;
const BATCH_CHARS = 2_000_000;

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
  private readonly vectors: VectorCache;
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
    this.vectors = new VectorCache(options.vectorCacheBytes ?? 256 * 1024 * 1024);
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
      await client.query(`DELETE FROM ${this.passages} WHERE user_id = $1 AND file_id = $2`, [
        file.userId,
        file.fileId,
      ]);
      let count = 0;
      let batch: IndexedPassage[] = [];
      let chars = 0;
      for await (const passage of passages) {
        batch.push(passage);
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
      await this.bumpGeneration(client, file.userId);
      await client.query("COMMIT");
      client.release();
      return count;
    } catch (err) {
      await rollbackAndRelease(client);
      throw unavailableIfDown(err);
    }
  }

  async deleteFilePassages(file: FileRef): Promise<void> {
    await this.ready();
    const client = await this.connect();
    try {
      // Takes the replacement's lock, so a delete that arrives while the file is being re-indexed
      // waits for it and then removes the new set too, instead of missing rows it could not see.
      await client.query("BEGIN");
      await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [this.fileLockKey(file)]);
      await client.query(`DELETE FROM ${this.passages} WHERE user_id = $1 AND file_id = $2`, [
        file.userId,
        file.fileId,
      ]);
      await this.bumpGeneration(client, file.userId);
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
    // The terms, alternatives (OR) like the other backends, as one tsquery literal bound as a
    // parameter: they hold only letters, marks and digits, and are quoted besides.
    // ts_rank counts every matched term and how often it occurs; normalisation 1 divides by
    // 1 + log(length), so one mention in a long passage ranks below a short passage with both
    // words (BM25 penalises length the same way). Ties keep insertion order, so results are stable.
    const sql = `
      SELECT p.id, p.file_id, p.ord, p.content, p.locator, ts_rank(p.tsv, q.query, 1) AS rank
      FROM ${this.passages} AS p, (SELECT $3::tsquery AS query) AS q
      WHERE p.user_id = $1 AND p.tsv @@ q.query
      ORDER BY rank DESC, p.id
      LIMIT $2`;
    try {
      const { rows } = await this.pool.query<PassageRow & { rank: number }>(sql, [
        query.userId,
        Math.max(0, Math.floor(query.limit)),
        terms.map(lexeme).join(" | "),
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
      const generation = await this.pool.query<{ generation: string }>(
        `SELECT generation FROM ${this.generations} WHERE user_id = $1`,
        [userId],
      );
      const matrix = await this.vectors.get(
        JSON.stringify([userId, slot, space]),
        generation.rows[0]?.generation ?? "0",
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
      if (nearest.length === 0) return [];
      const { rows } = await this.pool.query<PassageRow>(
        `SELECT id, file_id, ord, content, locator FROM ${this.passages} WHERE user_id = $1 AND id = ANY($2::bigint[])`,
        [userId, nearest.map((n) => n.id)],
      );
      const byId = new Map(rows.map((r) => [String(r.id), r]));
      // A passage replaced since the matrix was read is skipped rather than shown stale.
      return nearest.flatMap((n) => {
        const row = byId.get(n.id);
        return row ? [hitOf(row, Math.max(0, n.score))] : [];
      });
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

  /** Marks the user's passages changed (inside the transaction that changes them). */
  private async bumpGeneration(client: pg.PoolClient, userId: string): Promise<void> {
    await client.query(
      `INSERT INTO ${this.generations} (user_id, generation) VALUES ($1, 1)
       ON CONFLICT (user_id) DO UPDATE SET generation = ${this.generations}.generation + 1`,
      [userId],
    );
  }

  private async insert(
    client: pg.PoolClient,
    file: FileRef,
    batch: readonly IndexedPassage[],
    from: number,
  ): Promise<void> {
    if (batch.length === 0) return;
    const vectors = (slot: (typeof VECTOR_SLOTS)[number]) => [
      batch.map((p) => p.vectors?.[slot]?.space ?? null),
      batch.map((p) => {
        const v = p.vectors?.[slot];
        return v ? vectorBytes(v.vector) : null;
      }),
    ];
    // One statement per batch whatever its size: arrays instead of a placeholder per value, so a
    // batch never nears the protocol's 65,535-parameter limit.
    await client.query(
      `INSERT INTO ${this.passages}
         (user_id, file_id, ord, content, locator, tsv, local_space, local_vector, remote_space, remote_vector)
       SELECT $1, $2, t.ord, t.content, t.locator::json, t.tsv::tsvector,
              t.local_space, t.local_vector, t.remote_space, t.remote_vector
       FROM unnest($3::int[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bytea[], $9::text[], $10::bytea[])
         AS t(ord, content, locator, tsv, local_space, local_vector, remote_space, remote_vector)`,
      [
        file.userId,
        file.fileId,
        batch.map((_, i) => from + i),
        // Postgres text cannot hold NUL, which PDF text layers sometimes carry; dropping it keeps
        // the file indexable instead of failing it over an invisible character.
        batch.map((p) => p.content.replaceAll("\u0000", "")),
        batch.map((p) => JSON.stringify(p.locator)),
        batch.map((p) => tsvectorOf(p.content)),
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

  /** Every passage's tsvector made again from its content (a migration, inside its transaction). */
  private async remakeTsvectors(client: pg.PoolClient): Promise<void> {
    for (let last = "0"; ;) {
      const { rows } = await client.query<{ id: string; content: string }>(
        `SELECT id, content FROM ${this.passages} WHERE id > $1 ORDER BY id LIMIT 1000`,
        [last],
      );
      if (rows.length === 0) return;
      await client.query(
        `UPDATE ${this.passages} AS p SET tsv = t.tsv::tsvector
         FROM unnest($1::bigint[], $2::text[]) AS t(id, tsv) WHERE p.id = t.id`,
        [rows.map((r) => r.id), rows.map((r) => tsvectorOf(r.content))],
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
      // Indexes made before terms were made in JavaScript had Postgres stem them (a text-search
      // configuration of the schema's own): their tsvectors are made again, and the
      // configuration dropped.
      const configured = await exists(
        `SELECT 1 FROM pg_ts_config c JOIN pg_namespace n ON n.oid = c.cfgnamespace
         WHERE n.nspname = $1 AND c.cfgname = 'locus_english'`,
        [this.schema],
      );
      if (configured) {
        if (!(await missing("passages"))) await this.remakeTsvectors(client);
        await client.query(`
          DROP TEXT SEARCH CONFIGURATION ${this.schema}.locus_english;
          DROP TEXT SEARCH DICTIONARY ${this.schema}.locus_english_stem;`);
      }

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
      if (await missing("vector_generations")) {
        await client.query(
          `CREATE TABLE ${this.generations} (user_id text PRIMARY KEY, generation bigint NOT NULL)`,
        );
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

/**
 * A passage's terms as a tsvector literal: each distinct term with the positions (from 1) it
 * occurs at, so a search knows how often each occurs.
 */
function tsvectorOf(content: string): string {
  const positions = new Map<string, number[]>();
  indexTerms(content).forEach((term, i) => {
    const at = positions.get(term) ?? [];
    if (at.length < MAX_POSITIONS) at.push(Math.min(i + 1, MAX_POSITION));
    positions.set(term, at);
  });
  return [...positions].map(([term, at]) => `${lexeme(term)}:${at.join(",")}`).join(" ");
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
