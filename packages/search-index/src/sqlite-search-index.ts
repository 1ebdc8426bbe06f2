import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import type { Locator } from "@locus/contracts";
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
import { bm25Score } from "./bm25.ts";

const BATCH = 500;

export interface SqliteSearchIndexOptions {
  /** Memory for users' vectors kept between ai searches (default 256 MB). */
  vectorCacheBytes?: number;
}

type PassageRow = { id: number; file_id: string; ord: number; content: string; locator: string };
/** A candidate FTS5 found: what the second BM25 pass reads of it (its terms and their count). */
type CandidateRow = { id: number; terms: string; term_count: number };

/**
 * FTS5's own BM25 picks at least this many candidates, which are then scored again on the user's
 * statistics (see `search`).
 */
const MIN_CANDIDATES = 200;

/**
 * Each user's words are indexed as distinct terms: "<tenant>_<word>". A query then reads only the
 * caller's postings, so tenancy is enforced inside the engine and a search costs what the
 * caller's matches cost, not what the caller's (or everyone's) whole collection costs. The tenant
 * is a hash of the user id, short to keep the terms small; results are still checked against
 * user_id, so even a hash collision could never show one user another's passages.
 */
const tenantOf = (userId: string) => `t${createHash("sha256").update(userId).digest("hex").slice(0, 12)}`;

/** A passage's terms as the FTS5 table indexes them: each with the tenant prefix, by spaces. */
const tenantText = (tenant: string, terms: readonly string[]) => terms.map((t) => `${tenant}_${t}`).join(" ");

const indexedText = (tenant: string, content: string) => tenantText(tenant, indexTerms(content));

/**
 * The FTS5 tokenizer only splits the prepared terms on spaces: terms are made in JavaScript
 * (`indexTerms`: folded, stemmed), the same for every backend. Stemming here would also be wrong:
 * Porter's rules measure the whole token, tenant prefix included, so for most tenants "bed"
 * (prefixed) lost its "ed" and met "being".
 */
const TOKENIZER = `unicode61 remove_diacritics 0 tokenchars '_' categories 'L* M* N* Co'`;

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
export class SqliteSearchIndex implements SearchIndex {
  private readonly db: BetterSqlite3.Database;
  private readonly searchStatement: BetterSqlite3.Statement<
    [string, number, string],
    PassageRow & { rank: number }
  >;
  private readonly candidatesStatement: BetterSqlite3.Statement<[string, number, string], CandidateRow>;
  private readonly firstUsersStatement: BetterSqlite3.Statement<[], { user_id: string }>;
  private readonly userStatsStatement: BetterSqlite3.Statement<[string], { passages: number; terms: number }>;
  private readonly vectors: VectorCache;

  constructor(path: string, options: SqliteSearchIndexOptions = {}) {
    this.vectors = new VectorCache(options.vectorCacheBytes ?? 256 * 1024 * 1024);
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    this.db = new BetterSqlite3(path);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("busy_timeout = 5000");
    this.db.pragma("synchronous = NORMAL");
    this.migrate();
    // CROSS JOIN fixes the order: the few FTS matches first, each looked up by rowid. Left to the
    // planner, the (user_id, file_id) index tempts it to walk all of the user's passages instead.
    this.searchStatement = this.db.prepare(`
      SELECT p.id, p.file_id, p.ord, p.content, p.locator, f.rank
      FROM (SELECT rowid, rank FROM passages_fts WHERE passages_fts MATCH ? ORDER BY rank LIMIT ?) AS f
      CROSS JOIN passages p ON p.id = f.rowid
      WHERE p.user_id = ?
      ORDER BY f.rank`);
    // The same, with only what a second scoring pass reads; the winners' text is read after.
    this.candidatesStatement = this.db.prepare(`
      SELECT p.id, p.terms, p.term_count
      FROM (SELECT rowid, rank FROM passages_fts WHERE passages_fts MATCH ? ORDER BY rank LIMIT ?) AS f
      CROSS JOIN passages p ON p.id = f.rowid
      WHERE p.user_id = ?
      ORDER BY f.rank`);
    this.userStatsStatement = this.db.prepare(`SELECT passages, terms FROM user_stats WHERE user_id = ?`);
    this.firstUsersStatement = this.db.prepare(`SELECT user_id FROM user_stats LIMIT 2`);
  }

  private migrate(): void {
    // Indexes made before terms were made in JavaScript had FTS5 stem them (the porter tokenizer):
    // their terms are made again, and the FTS5 table from them. Immediate: a second process
    // opening the same file waits, then finds the work done.
    this.db
      .transaction(() => {
        const fts = this.db
          .prepare<[], { sql: string }>(`SELECT sql FROM sqlite_master WHERE name = 'passages_fts'`)
          .get();
        const retokenise = fts !== undefined && !fts.sql.includes(TOKENIZER);
        if (retokenise) {
          this.db.exec(`DROP TRIGGER IF EXISTS passages_ai;
                        DROP TRIGGER IF EXISTS passages_ad;
                        DROP TABLE passages_fts;`);
        }
        const uncounted = this.createTables();
        if (retokenise) {
          this.remakeTerms();
          this.db.exec(`INSERT INTO passages_fts(passages_fts) VALUES ('rebuild')`);
        }
        // Terms are separated by single spaces, so a passage's count is its spaces plus one.
        if (uncounted || retokenise) {
          this.db.exec(`
            UPDATE passages SET term_count = ${TERM_COUNT_OF_TERMS};
            UPDATE passages_staging SET term_count = ${TERM_COUNT_OF_TERMS};
            DELETE FROM user_stats;
            INSERT INTO user_stats (user_id, passages, terms)
              SELECT user_id, count(*), sum(term_count) FROM passages GROUP BY user_id;`);
        }
      })
      .immediate();
  }

  /** Every passage's terms made again from its content (a migration). */
  private remakeTerms(): void {
    const read = this.db.prepare<[number], { id: number; user_id: string; content: string }>(
      `SELECT id, user_id, content FROM passages WHERE id > ? ORDER BY id LIMIT 1000`,
    );
    const write = this.db.prepare<[string, number]>(`UPDATE passages SET terms = ? WHERE id = ?`);
    for (let last = 0, rows = read.all(last); rows.length > 0; rows = read.all(last)) {
      for (const row of rows) write.run(indexedText(tenantOf(row.user_id), row.content), row.id);
      last = rows[rows.length - 1]!.id;
    }
    // A staged passage (a replacement in flight) names no user; its old terms carry the tenant.
    const staged = this.db.prepare<[], { rowid: number; terms: string; content: string }>(
      `SELECT rowid, terms, content FROM passages_staging`,
    );
    const restage = this.db.prepare<[string, number]>(
      `UPDATE passages_staging SET terms = ? WHERE rowid = ?`,
    );
    for (const row of staged.all()) {
      const tenant = /^(t[0-9a-f]{12})_/.exec(row.terms)?.[1];
      if (tenant) restage.run(indexedText(tenant, row.content), row.rowid);
    }
  }

  /** Creates what is missing; true when the passages' term counts (and user_stats) are new. */
  private createTables(): boolean {
    const counted = this.db
      .prepare<[], { found: number }>(`SELECT 1 AS found FROM sqlite_master WHERE name = 'user_stats'`)
      .get();
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS passages (
        id INTEGER PRIMARY KEY,
        user_id TEXT NOT NULL,
        file_id TEXT NOT NULL,
        ord INTEGER NOT NULL,
        content TEXT NOT NULL,
        locator TEXT NOT NULL,
        terms TEXT NOT NULL
      );
      CREATE INDEX IF NOT EXISTS passages_file_idx ON passages(file_id);
      CREATE VIRTUAL TABLE IF NOT EXISTS passages_fts USING fts5(
        terms, content='passages', content_rowid='id',
        tokenize="${TOKENIZER}"
      );
      CREATE TRIGGER IF NOT EXISTS passages_ai AFTER INSERT ON passages BEGIN
        INSERT INTO passages_fts(rowid, terms) VALUES (new.id, new.terms);
      END;
      CREATE TRIGGER IF NOT EXISTS passages_ad AFTER DELETE ON passages BEGIN
        INSERT INTO passages_fts(passages_fts, rowid, terms) VALUES ('delete', old.id, old.terms);
      END;
      CREATE TABLE IF NOT EXISTS passages_staging (
        batch TEXT NOT NULL,
        ord INTEGER NOT NULL,
        content TEXT NOT NULL,
        locator TEXT NOT NULL,
        terms TEXT NOT NULL
      );
      CREATE INDEX IF NOT EXISTS passages_staging_batch_idx ON passages_staging(batch);
      -- Serves replace and delete (user and file), the vector scan (user) and the passages around a
      -- hit (user, file, ord), in one index: with a second index on user_id alone, SQLite would
      -- pick it for "file_id = ? AND user_id = ?" and walk every passage of the user to replace one
      -- file. (Indexes made before ord was indexed had it on (user_id, file_id): replaced.)
      CREATE INDEX IF NOT EXISTS passages_user_file_ord_idx ON passages(user_id, file_id, ord);
      DROP INDEX IF EXISTS passages_user_file_idx;
      CREATE TABLE IF NOT EXISTS vector_generations (
        user_id TEXT PRIMARY KEY,
        generation INTEGER NOT NULL
      );
      -- Each user's passages and their terms in all, for BM25 on the user's own statistics.
      CREATE TABLE IF NOT EXISTS user_stats (
        user_id TEXT PRIMARY KEY,
        passages INTEGER NOT NULL,
        terms INTEGER NOT NULL
      );
      -- FTS5's count of the passages holding each (tenant-prefixed) term: the user's own.
      CREATE VIRTUAL TABLE IF NOT EXISTS passages_vocab USING fts5vocab(passages_fts, 'row');
    `);
    // Indexes made before ai mode have no vector columns: add them (NULL until `index rebuild`).
    for (const table of ["passages", "passages_staging"]) {
      const columns = new Set(
        this.db
          .prepare<[], { name: string }>(`SELECT name FROM pragma_table_info('${table}')`)
          .all()
          .map((c) => c.name),
      );
      for (const slot of VECTOR_SLOTS) {
        if (!columns.has(`${slot}_vector`)) {
          this.db.exec(`ALTER TABLE ${table} ADD COLUMN ${slot}_space TEXT;
                        ALTER TABLE ${table} ADD COLUMN ${slot}_vector BLOB;`);
        }
      }
      // Indexes made before BM25 on each user's statistics: counted by the migration.
      if (!columns.has("term_count")) {
        this.db.exec(`ALTER TABLE ${table} ADD COLUMN term_count INTEGER NOT NULL DEFAULT 0`);
      }
    }
    return counted === undefined;
  }

  /** Adds a change in one user's passages and terms to their statistics (inside its transaction). */
  private changeUserStats(userId: string, passages: number, terms: number): void {
    if (passages === 0 && terms === 0) return;
    this.db
      .prepare(
        `INSERT INTO user_stats (user_id, passages, terms) VALUES (?, ?, ?)
         ON CONFLICT(user_id) DO UPDATE SET passages = passages + excluded.passages, terms = terms + excluded.terms`,
      )
      .run(userId, passages, terms);
    this.db.prepare(`DELETE FROM user_stats WHERE user_id = ? AND passages <= 0`).run(userId);
  }

  /** Deletes the file's passages (inside a transaction), and takes them from the user's statistics. */
  private removeFile(file: FileRef): void {
    const gone = this.db
      .prepare<[string, string], { passages: number; terms: number | null }>(
        `SELECT count(*) AS passages, sum(term_count) AS terms FROM passages WHERE file_id = ? AND user_id = ?`,
      )
      .get(file.fileId, file.userId);
    this.db.prepare(`DELETE FROM passages WHERE file_id = ? AND user_id = ?`).run(file.fileId, file.userId);
    this.changeUserStats(file.userId, -(gone?.passages ?? 0), -(gone?.terms ?? 0));
  }

  /** Marks the user's passages changed: cached vector matrices of theirs are stale. */
  private bumpGeneration(userId: string): void {
    this.db
      .prepare(
        `INSERT INTO vector_generations (user_id, generation) VALUES (?, 1)
         ON CONFLICT(user_id) DO UPDATE SET generation = generation + 1`,
      )
      .run(userId);
  }

  async replaceFilePassages(file: FileRef, passages: AsyncIterable<IndexedPassage>): Promise<number> {
    // Passages arrive as a stream of unknown length: stage them in batches, then swap the whole
    // set in one transaction so searches never see a mix of old and new.
    const tenant = tenantOf(file.userId);
    const batch = `${file.fileId}:${process.pid}:${Date.now()}:${Math.random()}`;
    const stage = this.db.prepare(
      `INSERT INTO passages_staging (batch, ord, content, locator, terms, term_count, ${VECTOR_COLUMNS})
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const stageMany = this.db.transaction((rows: IndexedPassage[], from: number) => {
      rows.forEach((p, i) => {
        const terms = indexTerms(p.content);
        stage.run(
          batch,
          from + i,
          p.content,
          JSON.stringify(p.locator),
          tenantText(tenant, terms),
          terms.length,
          ...VECTOR_SLOTS.flatMap((slot) => {
            const v = p.vectors?.[slot];
            return v ? [v.space, vectorBytes(v.vector)] : [null, null];
          }),
        );
      });
    });
    let count = 0;
    let pending: IndexedPassage[] = [];
    try {
      for await (const passage of passages) {
        pending.push(passage);
        if (pending.length >= BATCH) {
          stageMany(pending, count);
          count += pending.length;
          pending = [];
        }
      }
      stageMany(pending, count);
      count += pending.length;
      this.db.transaction(() => {
        this.removeFile(file);
        this.db
          .prepare(
            `INSERT INTO passages (user_id, file_id, ord, content, locator, terms, term_count, ${VECTOR_COLUMNS})
             SELECT ?, ?, ord, content, locator, terms, term_count, ${VECTOR_COLUMNS}
             FROM passages_staging WHERE batch = ? ORDER BY ord`,
          )
          .run(file.userId, file.fileId, batch);
        const added = this.db
          .prepare<[string], { passages: number; terms: number | null }>(
            `SELECT count(*) AS passages, sum(term_count) AS terms FROM passages_staging WHERE batch = ?`,
          )
          .get(batch);
        this.changeUserStats(file.userId, added?.passages ?? 0, added?.terms ?? 0);
        this.db.prepare(`DELETE FROM passages_staging WHERE batch = ?`).run(batch);
        this.bumpGeneration(file.userId);
      })();
      return count;
    } catch (err) {
      this.db.prepare(`DELETE FROM passages_staging WHERE batch = ?`).run(batch);
      throw err;
    }
  }

  /** Each file's passages replaced in turn: searches see every other file throughout. */
  rebuild(source: AsyncIterable<FilePassages>): Promise<{ files: number; passages: number }> {
    return replaceEachFile(this, source);
  }

  deleteFilePassages(file: FileRef): Promise<void> {
    this.db.transaction(() => {
      this.removeFile(file);
      this.bumpGeneration(file.userId);
    })();
    return Promise.resolve();
  }

  search(query: { userId: string; text: string; limit: number }): Promise<PassageHit[]> {
    const terms = queryTerms(query.text);
    const limit = Math.max(0, Math.floor(query.limit));
    if (terms.length === 0 || limit === 0) return Promise.resolve([]);
    const tenant = tenantOf(query.userId);
    const tenantTerms = terms.map((t) => `${tenant}_${t}`);
    // Terms hold only letters, marks and digits, so quoting them keeps every FTS operator out.
    const match = tenantTerms.map((t) => `"${t}"`).join(" OR ");
    // One read transaction, so the candidates and the statistics are of the same passages.
    return Promise.resolve(
      this.db.transaction(() => {
        // With one user in the file, FTS5's totals are that user's: its bm25() is already BM25 on
        // the user's own statistics, and needs no second pass.
        const users = this.firstUsersStatement.all();
        if (users.length === 1 && users[0]!.user_id === query.userId) {
          return this.searchStatement
            .all(match, limit, query.userId)
            .map((row) => hitOf(row, normaliseScore(-row.rank)));
        }
        const candidates = this.candidatesStatement.all(
          match,
          Math.max(MIN_CANDIDATES, 2 * limit),
          query.userId,
        );
        if (candidates.length === 0) return [];
        const user = this.userStatsStatement.get(query.userId);
        const vocab = this.db
          .prepare<string[], { term: string; doc: number }>(
            `SELECT term, doc FROM passages_vocab WHERE term IN (${tenantTerms.map(() => "?").join(",")})`,
          )
          .all(...tenantTerms);
        const stats = {
          passages: user?.passages ?? 0,
          terms: user?.terms ?? 0,
          passagesWith: new Map(vocab.map((v) => [v.term, v.doc])),
        };
        // FTS5's order breaks ties, so equal scores keep the order every search gives them.
        const best = candidates
          .map((row, order) => {
            const frequency = termFrequencies(row.terms, tenantTerms);
            const score = bm25Score(tenantTerms, (t) => frequency.get(t) ?? 0, row.term_count, stats);
            return { id: row.id, order, score };
          })
          .sort((a, b) => b.score - a.score || a.order - b.order)
          .slice(0, limit);
        const rows = new Map(
          this.db
            .prepare<number[], PassageRow>(
              `SELECT id, file_id, ord, content, locator FROM passages WHERE id IN (${best.map(() => "?").join(",")})`,
            )
            .all(...best.map((b) => b.id))
            .map((row) => [row.id, row]),
        );
        return best.flatMap(({ id, score }) => {
          const row = rows.get(id);
          return row ? [hitOf(row, normaliseScore(score))] : [];
        });
      })(),
    );
  }

  async vectorSearch(query: VectorQuery): Promise<PassageHit[]> {
    const { userId, slot, space } = query;
    if (query.limit <= 0 || !VECTOR_SLOTS.includes(slot)) return [];
    const generation =
      this.db
        .prepare<[string], { generation: number }>(
          `SELECT generation FROM vector_generations WHERE user_id = ?`,
        )
        .get(userId)?.generation ?? 0;
    const matrix = await this.vectors.get(JSON.stringify([userId, slot, space]), String(generation), () => {
      const rows = this.db
        .prepare<[string, string], { id: number; bytes: Buffer }>(
          `SELECT id, ${slot}_vector AS bytes FROM passages
           WHERE user_id = ? AND ${slot}_space = ? AND ${slot}_vector IS NOT NULL ORDER BY id`,
        )
        .all(userId, space);
      return Promise.resolve(
        VectorMatrix.fromRows(
          rows.map((r) => ({ id: String(r.id), bytes: r.bytes })),
          query.vector.length,
        ),
      );
    });
    const nearest = matrix.nearest(query.vector, query.limit);
    if (nearest.length === 0) return [];
    const rows = new Map(
      this.db
        .prepare<unknown[], PassageRow>(
          `SELECT id, file_id, ord, content, locator FROM passages
           WHERE user_id = ? AND id IN (${nearest.map(() => "?").join(",")})`,
        )
        .all(userId, ...nearest.map((n) => Number(n.id)))
        .map((r) => [String(r.id), r]),
    );
    // A passage replaced since the matrix was read is skipped rather than shown stale.
    return nearest.flatMap((n) => {
      const row = rows.get(n.id);
      return row ? [hitOf(row, Math.max(0, n.score))] : [];
    });
  }

  passagesInRanges(query: { userId: string; ranges: readonly PassageRange[] }): Promise<PassageHit[]> {
    const ranges = boundedRanges(query.ranges);
    const read = this.db.prepare<[string, string, number, number], PassageRow>(
      `SELECT id, file_id, ord, content, locator FROM passages
       WHERE user_id = ? AND file_id = ? AND ord BETWEEN ? AND ? ORDER BY ord`,
    );
    const rows = ranges.flatMap((r) => read.all(query.userId, r.fileId, r.from, r.to));
    return Promise.resolve(
      inRangeOrder(
        ranges,
        rows.map((r) => hitOf(r, 0)),
      ),
    );
  }

  check(): Promise<void> {
    this.db.prepare("SELECT 1").get();
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.db.close();
    return Promise.resolve();
  }
}

/** SQL for the number of space-separated terms in a row's `terms`. */
const TERM_COUNT_OF_TERMS = `CASE WHEN terms = '' THEN 0 ELSE length(terms) - length(replace(terms, ' ', '')) + 1 END`;

/**
 * How often each of `wanted` occurs in a passage's space-separated terms: searched for, rather
 * than splitting the whole string (a passage has ~50 terms, each with its tenant prefix).
 */
function termFrequencies(terms: string, wanted: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const term of wanted) {
    let n = 0;
    for (let at = terms.indexOf(term); at !== -1; at = terms.indexOf(term, at + term.length)) {
      const end = at + term.length;
      if ((at === 0 || terms[at - 1] === " ") && (end === terms.length || terms[end] === " ")) n += 1;
    }
    counts.set(term, n);
  }
  return counts;
}

const VECTOR_SLOTS = ["local", "remote"] as const;
const VECTOR_COLUMNS = VECTOR_SLOTS.map((slot) => `${slot}_space, ${slot}_vector`).join(", ");

const hitOf = (row: PassageRow, score: number): PassageHit => ({
  id: String(row.id),
  fileId: row.file_id,
  ord: row.ord,
  content: row.content,
  locator: JSON.parse(row.locator) as Locator,
  score,
});
