// The index's tables, and how they are made and brought up to date (migrations).

import type BetterSqlite3 from "better-sqlite3";
import { indexedText, tenantOf } from "./sqlite-terms.ts";

export const VECTOR_SLOTS = ["local", "remote"] as const;
export const VECTOR_COLUMNS = VECTOR_SLOTS.map((slot) => `${slot}_space, ${slot}_vector`).join(", ");

/**
 * The FTS5 tokenizer only splits the prepared terms on spaces: terms are made in JavaScript
 * (`indexTerms`: folded, stemmed), the same for every backend. Stemming here would also be wrong:
 * Porter's rules measure the whole token, tenant prefix included, so for most tenants "bed"
 * (prefixed) lost its "ed" and met "being".
 */
const TOKENIZER = `unicode61 remove_diacritics 0 tokenchars '_' categories 'L* M* N* Co'`;

/** SQL for the number of space-separated terms in a row's `terms`. */
const TERM_COUNT_OF_TERMS = `CASE WHEN terms = '' THEN 0 ELSE length(terms) - length(replace(terms, ' ', '')) + 1 END`;

export function migrate(db: BetterSqlite3.Database): void {
  // Indexes made before terms were made in JavaScript had FTS5 stem them (the porter tokenizer):
  // their terms are made again, and the FTS5 table from them. Immediate: a second process
  // opening the same file waits, then finds the work done.
  db.transaction(() => {
    const fts = db
      .prepare<[], { sql: string }>(`SELECT sql FROM sqlite_master WHERE name = 'passages_fts'`)
      .get();
    const retokenise = fts !== undefined && !fts.sql.includes(TOKENIZER);
    if (retokenise) {
      db.exec(`DROP TRIGGER IF EXISTS passages_ai;
                        DROP TRIGGER IF EXISTS passages_ad;
                        DROP TABLE passages_fts;`);
    }
    const uncounted = createTables(db);
    if (retokenise) {
      remakeTerms(db);
      db.exec(`INSERT INTO passages_fts(passages_fts) VALUES ('rebuild')`);
    }
    // Terms are separated by single spaces, so a passage's count is its spaces plus one.
    if (uncounted || retokenise) {
      db.exec(`
            UPDATE passages SET term_count = ${TERM_COUNT_OF_TERMS};
            UPDATE passages_staging SET term_count = ${TERM_COUNT_OF_TERMS};
            DELETE FROM user_stats;
            INSERT INTO user_stats (user_id, passages, terms)
              SELECT user_id, count(*), sum(term_count) FROM passages GROUP BY user_id;`);
    }
  }).immediate();
}

/** Every passage's terms made again from its content (a migration). */
function remakeTerms(db: BetterSqlite3.Database): void {
  const read = db.prepare<[number], { id: number; user_id: string; content: string }>(
    `SELECT id, user_id, content FROM passages WHERE id > ? ORDER BY id LIMIT 1000`,
  );
  const write = db.prepare<[string, number]>(`UPDATE passages SET terms = ? WHERE id = ?`);
  for (let last = 0, rows = read.all(last); rows.length > 0; rows = read.all(last)) {
    for (const row of rows) write.run(indexedText(tenantOf(row.user_id), row.content), row.id);
    last = rows[rows.length - 1]!.id;
  }
  // A staged passage (a replacement in flight) names no user; its old terms carry the tenant.
  const staged = db.prepare<[], { rowid: number; terms: string; content: string }>(
    `SELECT rowid, terms, content FROM passages_staging`,
  );
  const restage = db.prepare<[string, number]>(`UPDATE passages_staging SET terms = ? WHERE rowid = ?`);
  for (const row of staged.all()) {
    const tenant = /^(t[0-9a-f]{12})_/.exec(row.terms)?.[1];
    if (tenant) restage.run(indexedText(tenant, row.content), row.rowid);
  }
}

/** Creates what is missing; true when the passages' term counts (and user_stats) are new. */
function createTables(db: BetterSqlite3.Database): boolean {
  const counted = db
    .prepare<[], { found: number }>(`SELECT 1 AS found FROM sqlite_master WHERE name = 'user_stats'`)
    .get();
  db.exec(`
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
      -- What a search's filter asks of a file (its type, upload instant and metadata), written and
      -- deleted in the transaction that writes or deletes its passages. A file indexed without them
      -- (before filters existed) has no row: only filters on file ids alone find it. created_at is
      -- Date.toISOString() text, which sorts as the instants do.
      CREATE TABLE IF NOT EXISTS file_attributes (
        user_id TEXT NOT NULL,
        file_id TEXT NOT NULL,
        file_type TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (user_id, file_id)
      ) WITHOUT ROWID;
      -- Each file's metadata as filters compare it (metadataTerms: a list gives a row per item),
      -- keyed for the filter's lookup of (user, key, value); the second index serves deletes.
      CREATE TABLE IF NOT EXISTS file_metadata_terms (
        user_id TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        file_id TEXT NOT NULL,
        PRIMARY KEY (user_id, key, value, file_id)
      ) WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS file_metadata_terms_file_idx ON file_metadata_terms(user_id, file_id);
    `);
  // Indexes made before ai mode have no vector columns: add them (NULL until `index rebuild`).
  for (const table of ["passages", "passages_staging"]) {
    const columns = new Set(
      db
        .prepare<[], { name: string }>(`SELECT name FROM pragma_table_info('${table}')`)
        .all()
        .map((c) => c.name),
    );
    for (const slot of VECTOR_SLOTS) {
      if (!columns.has(`${slot}_vector`)) {
        db.exec(`ALTER TABLE ${table} ADD COLUMN ${slot}_space TEXT;
                        ALTER TABLE ${table} ADD COLUMN ${slot}_vector BLOB;`);
      }
    }
    // Indexes made before BM25 on each user's statistics: counted by the migration.
    if (!columns.has("term_count")) {
      db.exec(`ALTER TABLE ${table} ADD COLUMN term_count INTEGER NOT NULL DEFAULT 0`);
    }
  }
  return counted === undefined;
}
