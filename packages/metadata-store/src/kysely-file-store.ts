import type { Kysely, Selectable, SelectQueryBuilder } from "kysely";
import {
  keysetCursor,
  metadataTerms,
  type AiVectorsState,
  type FileFilter,
  type FileMetadata,
  type FileStatus,
  type FileType,
} from "@locus/contracts";
import type {
  ClaimedFile,
  FileExpectation,
  FilePage,
  FileRecord,
  FileStore,
  FileUpdate,
} from "./file-store.ts";
import { afterCursor } from "./keyset.ts";
import { insertOutboxEntries } from "./kysely-outbox-store.ts";
import type { NewOutboxEntry } from "./outbox-store.ts";
import type { Database, FilesTable } from "./schema.ts";

const toFile = (r: Selectable<FilesTable>): FileRecord => ({
  id: r.id,
  userId: r.user_id,
  originalName: r.original_name,
  fileType: r.file_type as FileType,
  mimeType: r.mime_type,
  sizeBytes: Number(r.size_bytes),
  blobKey: r.blob_key,
  status: r.status as FileStatus,
  error: r.error_code === null ? null : { code: r.error_code, message: r.error_message ?? "" },
  pageCount: r.page_count,
  // Postgres returns double precision as a number, SQLite as a number: no conversion needed.
  durationS: r.duration_s,
  passageCount: r.passage_count,
  progress: r.progress,
  ...(r.ai_vectors === null ? {} : { aiVectors: r.ai_vectors as AiVectorsState }),
  metadata: parseMetadata(r.metadata),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** The stored JSON text; Locus writes it from a validated object, so anything else reads as none. */
function parseMetadata(text: string): FileMetadata {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as FileMetadata)
      : {};
  } catch {
    return {};
  }
}

type FilesQuery = SelectQueryBuilder<Database, "files", Selectable<FilesTable>>;

/** The filter's conditions on a query of one user's files (file_metadata_terms rows for metadata). */
function whereFilter(query: FilesQuery, userId: string, filter: FileFilter | undefined): FilesQuery {
  if (!filter) return query;
  let q = query;
  if (filter.fileIds?.length) q = q.where("files.id", "in", [...filter.fileIds]);
  if (filter.fileTypes?.length) q = q.where("files.file_type", "in", [...filter.fileTypes]);
  if (filter.createdAfter !== undefined) q = q.where("files.created_at", ">", filter.createdAfter);
  if (filter.createdBefore !== undefined) q = q.where("files.created_at", "<", filter.createdBefore);
  for (const [key, value] of Object.entries(filter.metadata ?? {})) {
    q = q.where((eb) =>
      eb.exists(
        eb
          .selectFrom("file_metadata_terms as m")
          .select("m.file_id")
          .whereRef("m.file_id", "=", "files.id")
          .where("m.user_id", "=", userId)
          .where("m.key", "=", key)
          .where("m.value", "=", value),
      ),
    );
  }
  return q;
}

/** File records over the shared Kysely database, in any dialect. */
export class KyselyFileStore implements FileStore {
  constructor(private readonly db: Kysely<Database>) {}

  async createFile(f: FileRecord, outbox: readonly NewOutboxEntry[] = []): Promise<void> {
    const terms = metadataTerms(f.metadata);
    // The record and its metadata rows together: a filter never sees a file without its metadata.
    // Its outbox entries too: a stored upload is never left without its processing request.
    await this.db.transaction().execute(async (trx) => {
      await this.insertFile(trx, f);
      await insertOutboxEntries(trx, outbox, f.createdAt);
      if (terms.length > 0) {
        await trx
          .insertInto("file_metadata_terms")
          .values(terms.map(([key, value]) => ({ file_id: f.id, user_id: f.userId, key, value })))
          .execute();
      }
    });
  }

  private async insertFile(db: Kysely<Database>, f: FileRecord): Promise<void> {
    await db
      .insertInto("files")
      .values({
        id: f.id,
        user_id: f.userId,
        original_name: f.originalName,
        file_type: f.fileType,
        mime_type: f.mimeType,
        size_bytes: f.sizeBytes,
        blob_key: f.blobKey,
        status: f.status,
        error_code: f.error?.code ?? null,
        error_message: f.error?.message ?? null,
        page_count: f.pageCount,
        duration_s: f.durationS,
        passage_count: f.passageCount,
        progress: f.progress,
        metadata: JSON.stringify(f.metadata),
        created_at: f.createdAt,
        updated_at: f.updatedAt,
      })
      .execute();
  }

  async getFile(userId: string, fileId: string): Promise<FileRecord | null> {
    const row = await this.db
      .selectFrom("files")
      .selectAll()
      .where("id", "=", fileId)
      .where("user_id", "=", userId)
      .executeTakeFirst();
    return row ? toFile(row) : null;
  }

  async getFileById(fileId: string): Promise<FileRecord | null> {
    const row = await this.db.selectFrom("files").selectAll().where("id", "=", fileId).executeTakeFirst();
    return row ? toFile(row) : null;
  }

  async getFiles(userId: string, fileIds: readonly string[]): Promise<FileRecord[]> {
    if (fileIds.length === 0) return [];
    const rows = await this.db
      .selectFrom("files")
      .selectAll()
      .where("user_id", "=", userId)
      .where("id", "in", [...new Set(fileIds)])
      .execute();
    return rows.map(toFile);
  }

  async listFiles(
    userId: string,
    options: { limit: number; cursor?: string | undefined; filter?: FileFilter | undefined },
  ): Promise<FilePage> {
    let query = whereFilter(
      this.db.selectFrom("files").selectAll("files").where("files.user_id", "=", userId),
      userId,
      options.filter,
    );
    if (options.cursor !== undefined) query = query.where(afterCursor(options.cursor, "created_at"));
    const rows = await query
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .limit(options.limit + 1)
      .execute();
    const files = rows.slice(0, options.limit).map(toFile);
    const last = files.at(-1);
    return {
      files,
      nextCursor:
        rows.length > options.limit && last ? keysetCursor({ at: last.createdAt, id: last.id }) : null,
    };
  }

  async listFilesWithStatus(
    status: FileStatus,
    options: { limit: number; afterId?: string },
  ): Promise<FileRecord[]> {
    let query = this.db.selectFrom("files").selectAll().where("status", "=", status);
    if (options.afterId !== undefined) query = query.where("id", ">", options.afterId);
    const rows = await query.orderBy("id", "asc").limit(options.limit).execute();
    return rows.map(toFile);
  }

  async listUnfinishedFiles(options: { limit: number; updatedBefore?: string }): Promise<FileRecord[]> {
    let query = this.db.selectFrom("files").selectAll().where("status", "in", ["pending", "processing"]);
    if (options.updatedBefore !== undefined) query = query.where("updated_at", "<", options.updatedBefore);
    const rows = await query.orderBy("created_at", "asc").limit(options.limit).execute();
    return rows.map(toFile);
  }

  async claimUnfinishedFile(fileId: string, seenUpdatedAt: string): Promise<ClaimedFile | null> {
    const row = await this.db
      .updateTable("files")
      .set((eb) => ({
        updated_at: new Date().toISOString(),
        // Only work that had started counts: a file still waiting in line did not stop anything.
        requeues: eb
          .case()
          .when("status", "=", "processing")
          .then(eb("requeues", "+", 1))
          .else(eb.ref("requeues"))
          .end(),
      }))
      .where("id", "=", fileId)
      .where("updated_at", "=", seenUpdatedAt)
      .where("status", "in", ["pending", "processing"])
      .returningAll()
      .executeTakeFirst();
    return row ? { ...toFile(row), requeues: row.requeues } : null;
  }

  async updateFile(
    fileId: string,
    update: FileUpdate,
    expected: FileExpectation,
  ): Promise<FileRecord | null> {
    const set: Partial<Selectable<FilesTable>> = { updated_at: new Date().toISOString() };
    if (update.status !== undefined) set.status = update.status;
    if (update.error !== undefined) {
      set.error_code = update.error?.code ?? null;
      set.error_message = update.error?.message ?? null;
    }
    if (update.pageCount !== undefined) set.page_count = update.pageCount;
    if (update.durationS !== undefined) set.duration_s = update.durationS;
    if (update.passageCount !== undefined) set.passage_count = update.passageCount;
    if (update.progress !== undefined) set.progress = update.progress;
    if (update.aiVectors !== undefined) set.ai_vectors = update.aiVectors;
    if (update.requeues !== undefined) set.requeues = update.requeues;
    if (expected.status.length === 0) return null;
    let query = this.db
      .updateTable("files")
      .set(set)
      .where("id", "=", fileId)
      .where("status", "in", [...expected.status]);
    if (expected.updatedAt !== undefined) query = query.where("updated_at", "=", expected.updatedAt);
    if (expected.aiVectors !== undefined) query = query.where("ai_vectors", "=", expected.aiVectors);
    const progressUpTo = expected.progressUpTo;
    if (progressUpTo !== undefined) {
      query = query.where((eb) => eb.or([eb("progress", "is", null), eb("progress", "<=", progressUpTo)]));
    }
    const row = await query.returningAll().executeTakeFirst();
    return row ? toFile(row) : null;
  }

  async deleteFile(userId: string, fileId: string): Promise<FileRecord | null> {
    const row = await this.db
      .deleteFrom("files")
      .where("id", "=", fileId)
      .where("user_id", "=", userId)
      .returningAll()
      .executeTakeFirst();
    return row ? toFile(row) : null;
  }
}
