// A search's file filter in SQLite: which of a user's files pass it, as a subquery that the keyword
// search puts inside its query and the vector search reads before its scan. Every value is bound.

import type BetterSqlite3 from "better-sqlite3";
import type { FilterConditions, StoredAttributes } from "./file-filter.ts";
import type { FileRef } from "./search-index.ts";

export interface SqlFragment {
  sql: string;
  params: unknown[];
}

/**
 * A SELECT of the ids of the user's files that pass the conditions. Lists are bound as one JSON
 * array each (json_each), so a filter of a hundred files is still one parameter. A condition on
 * attributes reads file_attributes, where a file indexed without them has no row.
 */
export function passingFilesSql(userId: string, conditions: FilterConditions): SqlFragment {
  if (!conditions.asksAttributes) {
    return { sql: `SELECT value FROM json_each(?)`, params: [JSON.stringify(conditions.fileIds ?? [])] };
  }
  const where = ["a.user_id = ?"];
  const params: unknown[] = [userId];
  if (conditions.fileIds) {
    where.push(`a.file_id IN (SELECT value FROM json_each(?))`);
    params.push(JSON.stringify(conditions.fileIds));
  }
  if (conditions.fileTypes) {
    where.push(`a.file_type IN (SELECT value FROM json_each(?))`);
    params.push(JSON.stringify(conditions.fileTypes));
  }
  if (conditions.createdAfter !== undefined) {
    where.push(`a.created_at > ?`);
    params.push(conditions.createdAfter);
  }
  if (conditions.createdBefore !== undefined) {
    where.push(`a.created_at < ?`);
    params.push(conditions.createdBefore);
  }
  // One lookup of the primary key (user, key, value, file) per metadata condition.
  for (const [key, value] of conditions.metadata) {
    where.push(
      `EXISTS (SELECT 1 FROM file_metadata_terms m
               WHERE m.user_id = a.user_id AND m.key = ? AND m.value = ? AND m.file_id = a.file_id)`,
    );
    params.push(key, value);
  }
  return { sql: `SELECT a.file_id FROM file_attributes a WHERE ${where.join(" AND ")}`, params };
}

/** The ids of the user's files that pass the conditions. */
export function passingFiles(
  db: BetterSqlite3.Database,
  userId: string,
  conditions: FilterConditions,
): Set<string> {
  const { sql, params } = passingFilesSql(userId, conditions);
  // raw(): each row as [file id], whichever column name the SELECT gives it.
  const rows = db
    .prepare<unknown[], unknown[]>(sql)
    .raw()
    .all(...params);
  return new Set(rows.map((row) => String(row[0])));
}

/**
 * Writes the file's attributes (inside the transaction that writes its passages, after
 * removeAttributes took the old ones).
 */
export function writeAttributes(
  db: BetterSqlite3.Database,
  file: FileRef,
  attributes: StoredAttributes | undefined,
): void {
  if (!attributes) return;
  db.prepare(`INSERT INTO file_attributes (user_id, file_id, file_type, created_at) VALUES (?, ?, ?, ?)`).run(
    file.userId,
    file.fileId,
    attributes.fileType,
    attributes.createdAt,
  );
  const term = db.prepare(
    `INSERT INTO file_metadata_terms (user_id, key, value, file_id) VALUES (?, ?, ?, ?)`,
  );
  for (const [key, value] of attributes.terms) term.run(file.userId, key, value, file.fileId);
}

/** Deletes the file's attributes (inside the transaction that deletes its passages). */
export function removeAttributes(db: BetterSqlite3.Database, file: FileRef): void {
  db.prepare(`DELETE FROM file_attributes WHERE user_id = ? AND file_id = ?`).run(file.userId, file.fileId);
  db.prepare(`DELETE FROM file_metadata_terms WHERE user_id = ? AND file_id = ?`).run(
    file.userId,
    file.fileId,
  );
}
