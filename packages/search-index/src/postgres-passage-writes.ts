// Writing a file's passages: each replacement or delete is one transaction that also keeps the
// user's generation, the file's version and the user's BM25 statistics in step.

import type pg from "pg";
import type { EncodedPassage, FileRef, IndexedFile, IndexedPassage, VectorSlot } from "./search-index.ts";
import { storedAttributes } from "./file-filter.ts";
import { removeAttributes, writeAttributes } from "./postgres-file-filter.ts";
import { vectorBytes } from "./vector-matrix.ts";
import { termsOf, type PassageTerms } from "./postgres-terms.ts";
import { VECTOR_SLOTS, type PostgresTables } from "./postgres-schema.ts";

/** Passages per INSERT, and a cap on their text, so memory stays flat whatever the file's size. */
const BATCH_ROWS = 500;
const BATCH_CHARS = 2_000_000;

/**
 * Replaces the file's passages on `client`, from BEGIN to COMMIT, and returns their count. On a
 * failure the caller rolls back.
 */
export async function replaceFile(
  client: pg.PoolClient,
  tables: PostgresTables,
  file: IndexedFile,
  passages: AsyncIterable<IndexedPassage>,
): Promise<number> {
  // Read first, so attributes that cannot be stored fail the call before anything is written.
  const attributes = storedAttributes(file);
  // One transaction: readers keep seeing the old set (MVCC) until COMMIT shows the new one.
  // The per-file lock makes two replacements of one file (a redelivered message racing the
  // original) take turns; without it both would delete the same old rows and insert two sets.
  await client.query("BEGIN");
  await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [fileLockKey(tables, file)]);
  const removed = await removeFile(client, tables, file);
  await removeAttributes(client, tables, file);
  await writeAttributes(client, tables, file, attributes);
  let count = 0;
  let batch: PassageTerms[] = [];
  let chars = 0;
  for await (const passage of passages) {
    batch.push({ ...termsOf(passage.content), passage });
    chars += passage.content.length;
    if (batch.length >= BATCH_ROWS || chars >= BATCH_CHARS) {
      await insert(client, tables, file, batch, count);
      count += batch.length;
      batch = [];
      chars = 0;
    }
  }
  await insert(client, tables, file, batch, count);
  count += batch.length;
  const generation = await bumpGeneration(client, tables, file.userId);
  await client.query(
    `INSERT INTO ${tables.indexedFiles} (user_id, file_id, version) VALUES ($1, $2, $3)
     ON CONFLICT (user_id, file_id) DO UPDATE SET version = excluded.version`,
    [file.userId, file.fileId, generation],
  );
  await applyStatistics(client, tables, file, removed);
  await client.query("COMMIT");
  return count;
}

/** Deletes the file's passages on `client`, from BEGIN to COMMIT. On a failure the caller rolls back. */
export async function deleteFile(
  client: pg.PoolClient,
  tables: PostgresTables,
  file: FileRef,
): Promise<void> {
  // Takes the replacement's lock, so a delete that arrives while the file is being re-indexed
  // waits for it and then removes the new set too, instead of missing rows it could not see.
  await client.query("BEGIN");
  await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [fileLockKey(tables, file)]);
  const removed = await removeFile(client, tables, file);
  await removeAttributes(client, tables, file);
  await bumpGeneration(client, tables, file.userId);
  await client.query(`DELETE FROM ${tables.indexedFiles} WHERE user_id = $1 AND file_id = $2`, [
    file.userId,
    file.fileId,
  ]);
  await applyStatistics(client, tables, file, removed);
  await client.query("COMMIT");
}

/**
 * Sets the passages' vectors in `slot` on `client`, from BEGIN to COMMIT, where each passage still
 * holds the content its vector was made from; the user's generation moves when any was stored (the
 * file's version does not: its terms are the same). On a failure the caller rolls back.
 */
export async function setVectors(
  client: pg.PoolClient,
  tables: PostgresTables,
  file: FileRef,
  slot: VectorSlot,
  space: string,
  vectors: readonly EncodedPassage[],
): Promise<number> {
  if (!VECTOR_SLOTS.includes(slot)) throw new Error(`no vector slot "${String(slot)}"`);
  await client.query("BEGIN");
  // The replacement's lock: vectors land before a replacement of the file or after it, never
  // between its delete and its insert.
  await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [fileLockKey(tables, file)]);
  const { rowCount } = await client.query(
    `UPDATE ${tables.passages} AS p SET ${slot}_space = $3, ${slot}_vector = v.vector
     FROM unnest($4::int[], $5::text[], $6::bytea[]) AS v(ord, content, vector)
     WHERE p.user_id = $1 AND p.file_id = $2 AND p.ord = v.ord AND p.content = v.content`,
    [
      file.userId,
      file.fileId,
      space,
      vectors.map((v) => v.ord),
      vectors.map((v) => v.content),
      vectors.map((v) => vectorBytes(v.vector)),
    ],
  );
  const stored = rowCount ?? 0;
  if (stored > 0) await bumpGeneration(client, tables, file.userId);
  await client.query("COMMIT");
  return stored;
}

function fileLockKey(tables: PostgresTables, file: FileRef): string {
  return JSON.stringify(["locus-search-index", tables.schema, file.userId, file.fileId]);
}

/** Marks the user's passages changed (inside the transaction that changes them); the new generation. */
async function bumpGeneration(
  client: pg.PoolClient,
  tables: PostgresTables,
  userId: string,
): Promise<string> {
  const { rows } = await client.query<{ generation: string }>(
    `INSERT INTO ${tables.generations} (user_id, generation) VALUES ($1, 1)
     ON CONFLICT (user_id) DO UPDATE SET generation = ${tables.generations}.generation + 1
     RETURNING generation`,
    [userId],
  );
  return rows[0]!.generation;
}

/**
 * Deletes the file's passages (inside the transaction that replaces or deletes it) and returns
 * what they counted in the user's statistics, to be taken off by applyStatistics.
 */
async function removeFile(
  client: pg.PoolClient,
  tables: PostgresTables,
  file: FileRef,
): Promise<RemovedCounts> {
  const perTerm = await client.query<{ terms: string[] | null; counts: number[] | null }>(
    `SELECT array_agg(term) AS terms, array_agg(n) AS counts FROM (
       SELECT t.term, count(*)::int AS n
       FROM ${tables.passages} AS p CROSS JOIN unnest(tsvector_to_array(p.tsv)) AS t(term)
       WHERE p.user_id = $1 AND p.file_id = $2 GROUP BY t.term) AS c`,
    [file.userId, file.fileId],
  );
  const removed = await client.query<{ passages: number; terms: string }>(
    `WITH gone AS (DELETE FROM ${tables.passages} WHERE user_id = $1 AND file_id = $2 RETURNING term_count)
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
async function applyStatistics(
  client: pg.PoolClient,
  tables: PostgresTables,
  file: FileRef,
  removed: RemovedCounts,
): Promise<void> {
  await client.query(
    `INSERT INTO ${tables.termStats} AS s (user_id, term, passages)
     SELECT $1, d.term, sum(d.delta) FROM (
       SELECT t.term, count(*)::int AS delta
       FROM ${tables.passages} AS p CROSS JOIN unnest(tsvector_to_array(p.tsv)) AS t(term)
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
      `DELETE FROM ${tables.termStats} WHERE user_id = $1 AND term = ANY($2::text[]) AND passages <= 0`,
      [file.userId, removed.perTerm.terms],
    );
  }
  await client.query(
    `INSERT INTO ${tables.userStats} AS s (user_id, passages, terms)
     SELECT $1, count(*) - $3::bigint, coalesce(sum(term_count), 0) - $4::bigint
     FROM ${tables.passages} WHERE user_id = $1 AND file_id = $2
     ON CONFLICT (user_id) DO UPDATE SET passages = s.passages + excluded.passages, terms = s.terms + excluded.terms`,
    [file.userId, file.fileId, removed.passages, removed.terms],
  );
  await client.query(`DELETE FROM ${tables.userStats} WHERE user_id = $1 AND passages <= 0`, [file.userId]);
}

async function insert(
  client: pg.PoolClient,
  tables: PostgresTables,
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
    `INSERT INTO ${tables.passages}
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

/** What a file's passages counted in the user's statistics, before they were deleted. */
interface RemovedCounts {
  passages: number;
  terms: number;
  /** Per term, the file's passages holding it (two arrays of one length). */
  perTerm: { terms: string[]; counts: number[] };
}
