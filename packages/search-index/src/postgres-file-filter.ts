// A search's file filter in PostgreSQL: which of a user's files pass it, as a subquery that quick
// search's SQL puts inside its query, or as a list read (with the user's generation) before the
// in-memory scorers run. Every value is a bound parameter: metadata keys and values are user input.

import type pg from "pg";
import type { FilterConditions, StoredAttributes } from "./file-filter.ts";
import type { FileRef } from "./search-index.ts";
import type { PostgresTables } from "./postgres-schema.ts";

/** Parameters of one statement, numbered as they are added. */
export class SqlParams {
  readonly values: unknown[];

  constructor(initial: readonly unknown[] = []) {
    this.values = [...initial];
  }

  /** Binds a value; its placeholder. */
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/**
 * Whether no file can pass (FilterConditions.matchesNothing), here also when the filter asks for a
 * NUL: Postgres text cannot hold one, so no stored id or metadata term has one (such terms are
 * not stored), and a query binding one would fail rather than find nothing.
 */
export function matchesNothingHere(conditions: FilterConditions): boolean {
  if (conditions.matchesNothing) return true;
  const values = [...(conditions.fileIds ?? []), ...conditions.metadata.flat()];
  return values.some((v) => v.includes("\u0000"));
}

/**
 * A SELECT of the ids of the user's files (the user's id bound at `user`) that pass the conditions.
 * A condition on attributes reads file_attributes, where a file indexed without them has no row.
 */
export function passingFilesSql(
  tables: PostgresTables,
  user: string,
  conditions: FilterConditions,
  params: SqlParams,
): string {
  if (!conditions.asksAttributes) return `SELECT unnest(${params.add(conditions.fileIds ?? [])}::text[])`;
  const where = [`a.user_id = ${user}`];
  if (conditions.fileIds) where.push(`a.file_id = ANY(${params.add(conditions.fileIds)}::text[])`);
  if (conditions.fileTypes) where.push(`a.file_type = ANY(${params.add(conditions.fileTypes)}::text[])`);
  if (conditions.createdAfter !== undefined) {
    where.push(`a.created_at > ${params.add(conditions.createdAfter)}::timestamptz`);
  }
  if (conditions.createdBefore !== undefined) {
    where.push(`a.created_at < ${params.add(conditions.createdBefore)}::timestamptz`);
  }
  // One probe of the primary key (user, key, value, file) per metadata condition.
  for (const [key, value] of conditions.metadata) {
    where.push(
      `EXISTS (SELECT 1 FROM ${tables.fileMetadata} AS m WHERE m.user_id = a.user_id
               AND m.key = ${params.add(key)}::text AND m.value = ${params.add(value)}::text
               AND m.file_id = a.file_id)`,
    );
  }
  return `SELECT a.file_id FROM ${tables.fileAttributes} AS a WHERE ${where.join(" AND ")}`;
}

/**
 * The ids of the user's files that pass the conditions, and the user's generation read in the same
 * statement (so a scorer holding that generation's passages can apply them).
 */
export async function passingFiles(
  pool: pg.Pool,
  tables: PostgresTables,
  userId: string,
  conditions: FilterConditions,
): Promise<{ generation: string; files: Set<string> }> {
  const params = new SqlParams([userId]);
  const files = passingFilesSql(tables, "$1", conditions, params);
  const { rows } = await pool.query<{ generation: string; files: string[] }>(
    `SELECT coalesce((SELECT generation FROM ${tables.generations} WHERE user_id = $1), 0)::text AS generation,
            ARRAY(${files}) AS files`,
    params.values,
  );
  return { generation: rows[0]?.generation ?? "0", files: new Set(rows[0]?.files ?? []) };
}

/** Deletes the file's attributes (inside the transaction that replaces or deletes its passages). */
export async function removeAttributes(
  client: pg.PoolClient,
  tables: PostgresTables,
  file: FileRef,
): Promise<void> {
  await client.query(`DELETE FROM ${tables.fileAttributes} WHERE user_id = $1 AND file_id = $2`, [
    file.userId,
    file.fileId,
  ]);
  await client.query(`DELETE FROM ${tables.fileMetadata} WHERE user_id = $1 AND file_id = $2`, [
    file.userId,
    file.fileId,
  ]);
}

/** Writes the file's attributes (inside the transaction that replaces its passages, after removeAttributes). */
export async function writeAttributes(
  client: pg.PoolClient,
  tables: PostgresTables,
  file: FileRef,
  attributes: StoredAttributes | undefined,
): Promise<void> {
  if (!attributes) return;
  await client.query(
    `INSERT INTO ${tables.fileAttributes} (user_id, file_id, file_type, created_at) VALUES ($1, $2, $3, $4)`,
    [file.userId, file.fileId, attributes.fileType, attributes.createdAt],
  );
  // A term holding NUL cannot be stored in text, and no filter can ask for it here (matchesNothingHere).
  const terms = attributes.terms.filter(([key, value]) => !`${key}${value}`.includes("\u0000"));
  if (terms.length === 0) return;
  await client.query(
    `INSERT INTO ${tables.fileMetadata} (user_id, key, value, file_id)
     SELECT $1, t.key, t.value, $2 FROM unnest($3::text[], $4::text[]) AS t(key, value)`,
    [file.userId, file.fileId, terms.map(([key]) => key), terms.map(([, value]) => value)],
  );
}
