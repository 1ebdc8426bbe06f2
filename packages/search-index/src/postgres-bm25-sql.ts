// BM25 scored in SQL: the quick search's answer while the user's postings are not in memory.

import type pg from "pg";
import type { PassageHit } from "./search-index.ts";
import { BM25_B, BM25_IDF_FLOOR, BM25_K1 } from "./bm25.ts";
import { normaliseScore } from "./search-index.ts";
import { unavailableIfDown } from "./postgres-connection.ts";
import { lexeme } from "./postgres-terms.ts";
import { hitOf, type PassageRow } from "./postgres-passage-reads.ts";
import type { PostgresTables } from "./postgres-schema.ts";
import type { FilterConditions } from "./file-filter.ts";
import { SqlParams, passingFilesSql } from "./postgres-file-filter.ts";

/**
 * The user's passages holding any of `terms` (made by `queryTerms`), best first, at most `limit`;
 * with `conditions`, only passages of files that pass them (in the WHERE, before the LIMIT).
 */
export async function searchInSql(
  pool: pg.Pool,
  tables: PostgresTables,
  userId: string,
  terms: readonly string[],
  limit: number,
  conditions?: FilterConditions,
): Promise<PassageHit[]> {
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
    .map((_, i) => `q.idf[${i + 1}] * ${frequency(i)} * ${BM25_K1 + 1}::float8 / (${frequency(i)} + ${norm})`)
    .join(" + ");
  const params = new SqlParams([
    userId,
    terms.map(lexeme).join(" | "),
    limit,
    terms,
    ...terms.map(lexeme),
    ...terms,
  ]);
  const filter = conditions ? `AND p.file_id IN (${passingFilesSql(tables, "$1", conditions, params)})` : "";
  const sql = `
    WITH s AS (
      SELECT passages::float8 AS total, greatest(terms::float8 / greatest(passages, 1), 1e-9) AS avg_length
      FROM ${tables.userStats} WHERE user_id = $1
    ), q AS (
      SELECT array_agg(greatest(ln((greatest(s.total - coalesce(t.passages, 0), 0) + 0.5)
                                   / (coalesce(t.passages, 0) + 0.5)), ${BM25_IDF_FLOOR}::float8)
                       ORDER BY x.i) AS idf
      FROM s CROSS JOIN unnest($4::text[]) WITH ORDINALITY AS x(term, i)
      LEFT JOIN ${tables.termStats} AS t ON t.user_id = $1 AND t.term = x.term
    )
    SELECT p.id, p.file_id, p.ord, p.content, p.locator, ${score} AS rank
    FROM ${tables.passages} AS p, s, q
    WHERE p.user_id = $1 AND p.tsv @@ $2::tsquery ${filter}
    ORDER BY rank DESC, p.id
    LIMIT $3`;
  try {
    const { rows } = await pool.query<PassageRow & { rank: number }>(sql, params.values);
    return rows.map((r) => hitOf(r, normaliseScore(r.rank)));
  } catch (err) {
    throw unavailableIfDown(err);
  }
}
