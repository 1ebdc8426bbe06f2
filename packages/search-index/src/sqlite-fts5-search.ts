// The quick search: FTS5 finds and ranks candidates, scored again with BM25 on the user's statistics.

import type BetterSqlite3 from "better-sqlite3";
import { normaliseScore, type PassageHit } from "./search-index.ts";
import { bm25Score } from "./bm25.ts";
import { tenantOf, termFrequencies } from "./sqlite-terms.ts";
import { hitOf, type PassageRow } from "./sqlite-passage-reads.ts";
import type { FilterConditions } from "./file-filter.ts";
import { passingFilesSql } from "./sqlite-file-filter.ts";

/** A candidate FTS5 found: what the second BM25 pass reads of it (its terms and their count). */
type CandidateRow = { id: number; terms: string; term_count: number };

/**
 * FTS5's own BM25 picks at least this many candidates, which are then scored again on the user's
 * statistics (see `search`).
 */
const MIN_CANDIDATES = 200;

/** The search's statements, prepared once (on a migrated database) and used by every search. */
export class Fts5Search {
  private readonly searchStatement: BetterSqlite3.Statement<
    [string, number, string],
    PassageRow & { rank: number }
  >;
  private readonly candidatesStatement: BetterSqlite3.Statement<[string, number, string], CandidateRow>;
  private readonly firstUsersStatement: BetterSqlite3.Statement<[], { user_id: string }>;
  private readonly userStatsStatement: BetterSqlite3.Statement<[string], { passages: number; terms: number }>;

  constructor(private readonly db: BetterSqlite3.Database) {
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

  /**
   * The user's passages holding any of `terms` (made by `queryTerms`, at least one), best first;
   * with `conditions`, only those of files that pass them.
   */
  search(
    userId: string,
    terms: readonly string[],
    limit: number,
    conditions?: FilterConditions,
  ): PassageHit[] {
    const tenant = tenantOf(userId);
    const tenantTerms = terms.map((t) => `${tenant}_${t}`);
    // Terms hold only letters, marks and digits, so quoting them keeps every FTS operator out.
    const match = tenantTerms.map((t) => `"${t}"`).join(" OR ");
    // One read transaction, so the candidates and the statistics are of the same passages.
    return this.db.transaction(() => {
      // With one user in the file, FTS5's totals are that user's: its bm25() is already BM25 on
      // the user's own statistics, and needs no second pass.
      const users = this.firstUsersStatement.all();
      if (users.length === 1 && users[0]!.user_id === userId) {
        const rows = conditions
          ? this.filtered<PassageRow & { rank: number }>(
              "p.id, p.file_id, p.ord, p.content, p.locator, f.rank",
              match,
              limit,
              userId,
              conditions,
            )
          : this.searchStatement.all(match, limit, userId);
        return rows.map((row) => hitOf(row, normaliseScore(-row.rank)));
      }
      const wanted = Math.max(MIN_CANDIDATES, 2 * limit);
      const candidates = conditions
        ? this.filtered<CandidateRow>("p.id, p.terms, p.term_count", match, wanted, userId, conditions)
        : this.candidatesStatement.all(match, wanted, userId);
      if (candidates.length === 0) return [];
      const user = this.userStatsStatement.get(userId);
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
    })();
  }

  /**
   * The best `limit` FTS5 matches among the passages of the user's files that pass the conditions:
   * the filter is in the query, before the LIMIT, so a filter that leaves fewer matches than the
   * unfiltered best still finds `limit` of them. (Prepared per search: its shape follows the filter.)
   */
  private filtered<Row>(
    columns: string,
    match: string,
    limit: number,
    userId: string,
    conditions: FilterConditions,
  ): Row[] {
    const files = passingFilesSql(userId, conditions);
    return this.db
      .prepare<unknown[], Row>(
        `SELECT ${columns}
         FROM passages_fts AS f CROSS JOIN passages p ON p.id = f.rowid
         WHERE f.passages_fts MATCH ? AND p.user_id = ? AND p.file_id IN (${files.sql})
         ORDER BY f.rank LIMIT ?`,
      )
      .all(match, userId, ...files.params, limit);
  }
}
