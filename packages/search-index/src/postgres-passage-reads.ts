// Reading passages back: the user's generation, and the rows of chosen passages as PassageHits.

import type pg from "pg";
import type { Locator } from "@locus/contracts";
import type { MissingVectorQuery, PassageHit, PassageToEncode } from "./search-index.ts";
import type { ScoredId } from "./postings.ts";
import { unavailableIfDown } from "./postgres-connection.ts";
import type { PostgresTables } from "./postgres-schema.ts";

export type PassageRow = { id: string; file_id: string; ord: number; content: string; locator: Locator };

export const hitOf = (row: PassageRow, score: number): PassageHit => ({
  id: String(row.id),
  fileId: row.file_id,
  ord: row.ord,
  content: row.content,
  locator: row.locator,
  score,
});

/** The user's generation: a counter bumped in every transaction that changes their passages. */
export async function generationOf(pool: pg.Pool, tables: PostgresTables, userId: string): Promise<string> {
  const { rows } = await pool.query<{ generation: string }>(
    `SELECT generation FROM ${tables.generations} WHERE user_id = $1`,
    [userId],
  );
  return rows[0]?.generation ?? "0";
}

/**
 * The passages of `best`, in its order, with its scores, and the user's generation read in the
 * same snapshot. A passage replaced since `best` was chosen (in memory) is left out rather than
 * shown stale.
 */
export async function passagesById(
  pool: pg.Pool,
  tables: PostgresTables,
  userId: string,
  best: readonly ScoredId[],
): Promise<{ generation: string; hits: PassageHit[] }> {
  try {
    // A join on the primary key, not `id = ANY(...) AND user_id = ...`: with the latter the planner
    // may AND the user's whole posting list from the GIN index with the ids (20 ms at 100k). The
    // generation row comes with no passage when none is asked for or found.
    const { rows } = await pool.query<{ generation: string } & Partial<PassageRow>>(
      `SELECT g.generation, p.id, p.file_id, p.ord, p.content, p.locator
       FROM (SELECT coalesce((SELECT generation FROM ${tables.generations} WHERE user_id = $1), 0)::text
               AS generation) AS g
       LEFT JOIN LATERAL (
         SELECT p.id, p.file_id, p.ord, p.content, p.locator
         FROM unnest($2::bigint[]) AS w(id) JOIN ${tables.passages} AS p ON p.id = w.id
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

/** The file's passages without a vector of the space in the slot, by ord (see SearchIndex). */
export async function rowsWithoutVector(
  pool: pg.Pool,
  tables: PostgresTables,
  query: MissingVectorQuery,
): Promise<PassageToEncode[]> {
  const { file, slot, space } = query;
  const { rows } = await pool.query<PassageToEncode>(
    `SELECT ord, content FROM ${tables.passages}
     WHERE user_id = $1 AND file_id = $2 AND ord > $3
       AND (${slot}_vector IS NULL OR ${slot}_space IS DISTINCT FROM $4)
     ORDER BY ord LIMIT $5`,
    [file.userId, file.fileId, query.afterOrd ?? -1, space, Math.max(0, Math.floor(query.limit))],
  );
  return rows;
}
