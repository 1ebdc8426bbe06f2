import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import type { ExtractedPassage, Locator } from "@locus/contracts";
import {
  normaliseScore,
  queryTerms,
  type FileRef,
  type PassageHit,
  type SearchIndex,
} from "./search-index.ts";

const BATCH = 500;

/** The user id as one FTS token, so the engine itself narrows a query to one tenant. */
const tenantToken = (userId: string) => `t${userId.replace(/-/g, "").toLowerCase()}`;

/**
 * SQLite FTS5 with BM25 ranking. Passages live in a plain table; an external-content FTS5 table
 * indexes a tenant token and the passage text, kept in step by triggers. The tenant column is
 * matched in every query and weighted 0 in ranking; results are also checked against user_id.
 */
export class SqliteSearchIndex implements SearchIndex {
  private readonly db: BetterSqlite3.Database;
  private readonly searchStatement: BetterSqlite3.Statement<
    [string, number, string],
    {
      file_id: string;
      content: string;
      locator: string;
      rank: number;
    }
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
        tenant TEXT NOT NULL,
        content TEXT NOT NULL,
        locator TEXT NOT NULL
      );
      CREATE INDEX IF NOT EXISTS passages_file_idx ON passages(file_id);
      CREATE VIRTUAL TABLE IF NOT EXISTS passages_fts USING fts5(
        tenant, content, content='passages', content_rowid='id',
        tokenize='porter unicode61 remove_diacritics 2'
      );
      CREATE TRIGGER IF NOT EXISTS passages_ai AFTER INSERT ON passages BEGIN
        INSERT INTO passages_fts(rowid, tenant, content) VALUES (new.id, new.tenant, new.content);
      END;
      CREATE TRIGGER IF NOT EXISTS passages_ad AFTER DELETE ON passages BEGIN
        INSERT INTO passages_fts(passages_fts, rowid, tenant, content) VALUES ('delete', old.id, old.tenant, old.content);
      END;
      CREATE TABLE IF NOT EXISTS passages_staging (
        batch TEXT NOT NULL,
        ord INTEGER NOT NULL,
        content TEXT NOT NULL,
        locator TEXT NOT NULL
      );
      CREATE INDEX IF NOT EXISTS passages_staging_batch_idx ON passages_staging(batch);
    `);
    // The tenant column only filters; it must not add to relevance.
    this.db.prepare(`INSERT INTO passages_fts(passages_fts, rank) VALUES ('rank', 'bm25(0.0, 1.0)')`).run();
  }

  async replaceFilePassages(file: FileRef, passages: AsyncIterable<ExtractedPassage>): Promise<number> {
    // Passages arrive as a stream of unknown length: stage them in batches, then swap the whole
    // set in one transaction so searches never see a mix of old and new.
    const batch = `${file.fileId}:${process.pid}:${Date.now()}:${Math.random()}`;
    const stage = this.db.prepare(
      `INSERT INTO passages_staging (batch, ord, content, locator) VALUES (?, ?, ?, ?)`,
    );
    const stageMany = this.db.transaction((rows: ExtractedPassage[], from: number) => {
      rows.forEach((p, i) => stage.run(batch, from + i, p.content, JSON.stringify(p.locator)));
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
            `INSERT INTO passages (user_id, file_id, ord, tenant, content, locator)
             SELECT ?, ?, ord, ?, content, locator FROM passages_staging WHERE batch = ? ORDER BY ord`,
          )
          .run(file.userId, file.fileId, tenantToken(file.userId), batch);
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
    const terms = queryTerms(query.text);
    if (terms.length === 0) return Promise.resolve([]);
    // Terms hold only letters and digits, so quoting them is enough to keep FTS syntax out.
    const match = `tenant:"${tenantToken(query.userId)}" AND content:(${terms.map((t) => `"${t}"`).join(" OR ")})`;
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
