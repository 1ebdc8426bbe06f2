import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import type { ExtractedPassage, Locator } from "@locus/contracts";
import {
  normaliseScore,
  queryTerms,
  withoutStopWords,
  words,
  type FileRef,
  type PassageHit,
  type SearchIndex,
} from "./search-index.ts";

const BATCH = 500;

/**
 * Each user's words are indexed as distinct terms: "<tenant>_<word>". A query then reads only the
 * caller's postings, so tenancy is enforced inside the engine and a search costs what the
 * caller's matches cost, not what the caller's (or everyone's) whole collection costs. The tenant
 * is a hash of the user id, short to keep the terms small; results are still checked against
 * user_id, so even a hash collision could never show one user another's passages.
 */
const tenantOf = (userId: string) => `t${createHash("sha256").update(userId).digest("hex").slice(0, 12)}`;

const indexedText = (tenant: string, content: string) =>
  words(content)
    .map((w) => `${tenant}_${w}`)
    .join(" ");

/**
 * SQLite FTS5 with BM25 ranking. Passages live in a plain table (what results show); an
 * external-content FTS5 table indexes their tenant-prefixed words, kept in step by triggers.
 * Words are split in JavaScript (see `words`), and FTS5 only stems them (Porter) and folds
 * diacritics, so queries and passages are tokenised the same way.
 */
export class SqliteSearchIndex implements SearchIndex {
  private readonly db: BetterSqlite3.Database;
  private readonly searchStatement: BetterSqlite3.Statement<
    [string, number, string],
    { file_id: string; content: string; locator: string; rank: number }
  >;

  constructor(path: string) {
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    this.db = new BetterSqlite3(path);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("busy_timeout = 5000");
    this.db.pragma("synchronous = NORMAL");
    this.migrate();
    this.searchStatement = this.db.prepare(`
      SELECT p.file_id, p.content, p.locator, f.rank
      FROM (SELECT rowid, rank FROM passages_fts WHERE passages_fts MATCH ? ORDER BY rank LIMIT ?) AS f
      JOIN passages p ON p.id = f.rowid
      WHERE p.user_id = ?
      ORDER BY f.rank`);
  }

  private migrate(): void {
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
        tokenize="porter unicode61 remove_diacritics 2 tokenchars '_' categories 'L* M* N* Co'"
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
    `);
  }

  async replaceFilePassages(file: FileRef, passages: AsyncIterable<ExtractedPassage>): Promise<number> {
    // Passages arrive as a stream of unknown length: stage them in batches, then swap the whole
    // set in one transaction so searches never see a mix of old and new.
    const tenant = tenantOf(file.userId);
    const batch = `${file.fileId}:${process.pid}:${Date.now()}:${Math.random()}`;
    const stage = this.db.prepare(
      `INSERT INTO passages_staging (batch, ord, content, locator, terms) VALUES (?, ?, ?, ?, ?)`,
    );
    const stageMany = this.db.transaction((rows: ExtractedPassage[], from: number) => {
      rows.forEach((p, i) =>
        stage.run(batch, from + i, p.content, JSON.stringify(p.locator), indexedText(tenant, p.content)),
      );
    });
    let count = 0;
    let pending: ExtractedPassage[] = [];
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
        this.db
          .prepare(`DELETE FROM passages WHERE file_id = ? AND user_id = ?`)
          .run(file.fileId, file.userId);
        this.db
          .prepare(
            `INSERT INTO passages (user_id, file_id, ord, content, locator, terms)
             SELECT ?, ?, ord, content, locator, terms FROM passages_staging WHERE batch = ? ORDER BY ord`,
          )
          .run(file.userId, file.fileId, batch);
        this.db.prepare(`DELETE FROM passages_staging WHERE batch = ?`).run(batch);
      })();
      return count;
    } catch (err) {
      this.db.prepare(`DELETE FROM passages_staging WHERE batch = ?`).run(batch);
      throw err;
    }
  }

  deleteFilePassages(file: FileRef): Promise<void> {
    this.db.prepare(`DELETE FROM passages WHERE file_id = ? AND user_id = ?`).run(file.fileId, file.userId);
    return Promise.resolve();
  }

  search(query: { userId: string; text: string; limit: number }): Promise<PassageHit[]> {
    const terms = withoutStopWords(queryTerms(query.text));
    if (terms.length === 0) return Promise.resolve([]);
    const tenant = tenantOf(query.userId);
    // Terms hold only letters, marks and digits, so quoting them keeps every FTS operator out.
    const match = terms.map((t) => `"${tenant}_${t}"`).join(" OR ");
    const rows = this.searchStatement.all(match, query.limit, query.userId);
    return Promise.resolve(
      rows.map((r) => ({
        fileId: r.file_id,
        content: r.content,
        locator: JSON.parse(r.locator) as Locator,
        score: normaliseScore(-r.rank),
      })),
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
