// Writing a file's passages: each replacement or delete is one transaction, with the user's statistics.

import type BetterSqlite3 from "better-sqlite3";
import {
  indexTerms,
  type EncodedPassage,
  type FileRef,
  type IndexedFile,
  type IndexedPassage,
  type VectorSlot,
} from "./search-index.ts";
import { storedAttributes } from "./file-filter.ts";
import { removeAttributes, writeAttributes } from "./sqlite-file-filter.ts";
import { vectorBytes } from "./vector-matrix.ts";
import { VECTOR_COLUMNS, VECTOR_SLOTS } from "./sqlite-schema.ts";
import { tenantOf, tenantText } from "./sqlite-terms.ts";

const BATCH = 500;

/**
 * Replaces the file's passages and attributes and returns the passages' count; staged rows are
 * removed on a failure.
 */
export async function replaceFile(
  db: BetterSqlite3.Database,
  file: IndexedFile,
  passages: AsyncIterable<IndexedPassage>,
): Promise<number> {
  // Read before any passage is staged, so attributes that cannot be stored fail the call at once.
  const attributes = storedAttributes(file);
  // Passages arrive as a stream of unknown length: stage them in batches, then swap the whole
  // set in one transaction so searches never see a mix of old and new.
  const tenant = tenantOf(file.userId);
  const batch = `${file.fileId}:${process.pid}:${Date.now()}:${Math.random()}`;
  const stage = db.prepare(
    `INSERT INTO passages_staging (batch, ord, content, locator, terms, term_count, ${VECTOR_COLUMNS})
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const stageMany = db.transaction((rows: IndexedPassage[], from: number) => {
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
    db.transaction(() => {
      removeFile(db, file);
      writeAttributes(db, file, attributes);
      db.prepare(
        `INSERT INTO passages (user_id, file_id, ord, content, locator, terms, term_count, ${VECTOR_COLUMNS})
             SELECT ?, ?, ord, content, locator, terms, term_count, ${VECTOR_COLUMNS}
             FROM passages_staging WHERE batch = ? ORDER BY ord`,
      ).run(file.userId, file.fileId, batch);
      const added = db
        .prepare<[string], { passages: number; terms: number | null }>(
          `SELECT count(*) AS passages, sum(term_count) AS terms FROM passages_staging WHERE batch = ?`,
        )
        .get(batch);
      changeUserStats(db, file.userId, added?.passages ?? 0, added?.terms ?? 0);
      db.prepare(`DELETE FROM passages_staging WHERE batch = ?`).run(batch);
      bumpGeneration(db, file.userId);
    })();
    return count;
  } catch (err) {
    db.prepare(`DELETE FROM passages_staging WHERE batch = ?`).run(batch);
    throw err;
  }
}

/** Deletes the file's passages in one transaction, and marks the user's passages changed. */
export function deleteFile(db: BetterSqlite3.Database, file: FileRef): void {
  db.transaction(() => {
    removeFile(db, file);
    bumpGeneration(db, file.userId);
  })();
}

/**
 * Sets the passages' vectors in `slot` where each passage still holds the content its vector was
 * made from, in one transaction, and marks the user's passages changed when any was stored.
 */
export function setVectors(
  db: BetterSqlite3.Database,
  file: FileRef,
  slot: VectorSlot,
  space: string,
  vectors: readonly EncodedPassage[],
): number {
  if (!VECTOR_SLOTS.includes(slot)) throw new Error(`no vector slot "${String(slot)}"`);
  const update = db.prepare<[string, Buffer, string, string, number, string]>(
    `UPDATE passages SET ${slot}_space = ?, ${slot}_vector = ?
       WHERE user_id = ? AND file_id = ? AND ord = ? AND content = ?`,
  );
  return db.transaction(() => {
    let stored = 0;
    for (const v of vectors)
      stored += update.run(space, vectorBytes(v.vector), file.userId, file.fileId, v.ord, v.content).changes;
    if (stored > 0) bumpGeneration(db, file.userId);
    return stored;
  })();
}

/** Adds a change in one user's passages and terms to their statistics (inside its transaction). */
function changeUserStats(db: BetterSqlite3.Database, userId: string, passages: number, terms: number): void {
  if (passages === 0 && terms === 0) return;
  db.prepare(
    `INSERT INTO user_stats (user_id, passages, terms) VALUES (?, ?, ?)
         ON CONFLICT(user_id) DO UPDATE SET passages = passages + excluded.passages, terms = terms + excluded.terms`,
  ).run(userId, passages, terms);
  db.prepare(`DELETE FROM user_stats WHERE user_id = ? AND passages <= 0`).run(userId);
}

/**
 * Deletes the file's passages and attributes (inside a transaction), and takes the passages from
 * the user's statistics.
 */
function removeFile(db: BetterSqlite3.Database, file: FileRef): void {
  removeAttributes(db, file);
  const gone = db
    .prepare<[string, string], { passages: number; terms: number | null }>(
      `SELECT count(*) AS passages, sum(term_count) AS terms FROM passages WHERE file_id = ? AND user_id = ?`,
    )
    .get(file.fileId, file.userId);
  db.prepare(`DELETE FROM passages WHERE file_id = ? AND user_id = ?`).run(file.fileId, file.userId);
  changeUserStats(db, file.userId, -(gone?.passages ?? 0), -(gone?.terms ?? 0));
}

/** Marks the user's passages changed: cached vector matrices of theirs are stale. */
function bumpGeneration(db: BetterSqlite3.Database, userId: string): void {
  db.prepare(
    `INSERT INTO vector_generations (user_id, generation) VALUES (?, 1)
         ON CONFLICT(user_id) DO UPDATE SET generation = generation + 1`,
  ).run(userId);
}
