import { randomUUID } from "node:crypto";
import { Migrator, sql, type Kysely, type Selectable } from "kysely";
import type { FileStatus, FileType } from "@locus/contracts";
import type {
  ApiKey,
  FilePage,
  FileRecord,
  FileUpdate,
  KeyType,
  MetadataStore,
  Plan,
  Session,
  User,
} from "./metadata-store.ts";
import { migrationProvider } from "./migrations.ts";
import type { ApiKeysTable, Database, FilesTable, UsersTable } from "./schema.ts";

const toUser = (r: Omit<Selectable<UsersTable>, "password_hash">): User => ({
  id: r.id,
  email: r.email,
  plan: r.plan as Plan,
  createdAt: r.created_at,
});

/** The owning user's columns, for the queries that join a key or a session to its user. */
const OWNER_COLUMNS = [
  "users.email as user_email",
  "users.plan as user_plan",
  "users.created_at as user_created_at",
] as const;

const ownerOf = (r: {
  user_id: string;
  user_email: string;
  user_plan: string;
  user_created_at: string;
}): User => ({
  id: r.user_id,
  email: r.user_email,
  plan: r.user_plan as Plan,
  createdAt: r.user_created_at,
});

const toKey = (r: Selectable<ApiKeysTable>): ApiKey => ({
  id: r.id,
  userId: r.user_id,
  name: r.name,
  type: r.type as KeyType,
  displayPrefix: r.display_prefix,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
  revokedAt: r.revoked_at,
});

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
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const encodeCursor = (f: { createdAt: string; id: string }) =>
  Buffer.from(JSON.stringify([f.createdAt, f.id])).toString("base64url");

function decodeCursor(cursor: string): { createdAt: string; id: string } | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      typeof value[0] === "string" &&
      typeof value[1] === "string"
    ) {
      return { createdAt: value[0], id: value[1] };
    }
  } catch {
    // fall through: a cursor we did not make
  }
  return null;
}

/** What a dialect's factory tunes in the shared data layer; SQLite needs none of it. */
export interface KyselyMetadataStoreOptions {
  /**
   * Schema for Kysely's migration bookkeeping tables. A server with several schemas needs it:
   * without it Kysely looks for its tables in every schema, and would take another deployment's
   * for this one's.
   */
  migrationTableSchema?: string;
  /**
   * Runs each migrate(): it calls `migrate` with the database the migrations should run on, after
   * any preparation the dialect needs (Postgres: create the schema, use a connection without a
   * statement timeout). Default: the store's own database.
   */
  runMigrations?: (migrate: (db: Kysely<Database>) => Promise<void>) => Promise<void>;
  /**
   * check() rejects after this long even when the server keeps the connection open but never
   * answers, so /readyz reports it instead of hanging. Default: no limit (an embedded file answers).
   */
  checkTimeoutMillis?: number;
}

/** The data layer shared by every SQL dialect (SQLite now, Postgres in split mode). */
export class KyselyMetadataStore implements MetadataStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: KyselyMetadataStoreOptions = {},
  ) {}

  async migrate(): Promise<void> {
    const migrate = async (db: Kysely<Database>) => {
      const migrator = new Migrator({
        db,
        provider: migrationProvider,
        migrationTableSchema: this.options.migrationTableSchema,
      });
      const { error, results } = await migrator.migrateToLatest();
      const failed = results?.find((r) => r.status === "Error");
      if (error || failed) {
        throw new Error(`Metadata migration ${failed?.migrationName ?? ""} failed`, { cause: error });
      }
    };
    await (this.options.runMigrations ? this.options.runMigrations(migrate) : migrate(this.db));
  }

  async check(): Promise<void> {
    const probe = sql`select 1`.execute(this.db);
    const limit = this.options.checkTimeoutMillis;
    if (limit === undefined) {
      await probe;
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`The metadata store did not answer within ${limit} ms`)),
        limit,
      );
    });
    try {
      // race() also handles a late rejection of the probe, so nothing goes unhandled.
      await Promise.race([probe, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }

  async createUser(input: { email: string; plan: Plan }): Promise<User> {
    const row = {
      id: randomUUID(),
      email: input.email,
      plan: input.plan,
      created_at: new Date().toISOString(),
    };
    await this.db.insertInto("users").values(row).execute();
    return toUser(row);
  }

  async findUserByEmail(email: string): Promise<User | null> {
    const row = await this.db.selectFrom("users").selectAll().where("email", "=", email).executeTakeFirst();
    return row ? toUser(row) : null;
  }

  async findUserById(id: string): Promise<User | null> {
    const row = await this.db.selectFrom("users").selectAll().where("id", "=", id).executeTakeFirst();
    return row ? toUser(row) : null;
  }

  async findCredentials(email: string): Promise<{ user: User; passwordHash: string | null } | null> {
    const row = await this.db.selectFrom("users").selectAll().where("email", "=", email).executeTakeFirst();
    return row ? { user: toUser(row), passwordHash: row.password_hash } : null;
  }

  async setPasswordHash(userId: string, passwordHash: string): Promise<void> {
    await this.db
      .updateTable("users")
      .set({ password_hash: passwordHash })
      .where("id", "=", userId)
      .execute();
  }

  async createSession(session: Omit<Session, "revokedAt">): Promise<Session> {
    await this.db
      .insertInto("sessions")
      .values({
        id: session.id,
        user_id: session.userId,
        created_at: session.createdAt,
        expires_at: session.expiresAt,
        revoked_at: null,
      })
      .execute();
    return { ...session, revokedAt: null };
  }

  async findActiveSession(id: string, now: string): Promise<{ session: Session; user: User } | null> {
    const row = await this.db
      .selectFrom("sessions")
      .innerJoin("users", "users.id", "sessions.user_id")
      .select([
        "sessions.id",
        "sessions.user_id",
        "sessions.created_at",
        "sessions.expires_at",
        "sessions.revoked_at",
        ...OWNER_COLUMNS,
      ])
      .where("sessions.id", "=", id)
      .where("sessions.revoked_at", "is", null)
      .where("sessions.expires_at", ">", now)
      .executeTakeFirst();
    if (!row) return null;
    return {
      session: {
        id: row.id,
        userId: row.user_id,
        createdAt: row.created_at,
        expiresAt: row.expires_at,
        revokedAt: row.revoked_at,
      },
      user: ownerOf(row),
    };
  }

  async revokeSession(id: string, at: string): Promise<void> {
    await this.db
      .updateTable("sessions")
      .set({ revoked_at: at })
      .where("id", "=", id)
      .where("revoked_at", "is", null)
      .execute();
  }

  async createKey(input: {
    userId: string;
    name: string;
    type: KeyType;
    displayPrefix: string;
    hash: string;
  }): Promise<ApiKey> {
    const row = {
      id: randomUUID(),
      user_id: input.userId,
      name: input.name,
      type: input.type,
      display_prefix: input.displayPrefix,
      hash: input.hash,
      created_at: new Date().toISOString(),
      last_used_at: null,
      revoked_at: null,
    };
    await this.db.insertInto("api_keys").values(row).execute();
    return toKey(row);
  }

  async findActiveKeyByHash(hash: string): Promise<{ key: ApiKey; user: User } | null> {
    const row = await this.db
      .selectFrom("api_keys")
      .innerJoin("users", "users.id", "api_keys.user_id")
      .select([
        "api_keys.id",
        "api_keys.user_id",
        "api_keys.name",
        "api_keys.type",
        "api_keys.display_prefix",
        "api_keys.hash",
        "api_keys.created_at",
        "api_keys.last_used_at",
        "api_keys.revoked_at",
        ...OWNER_COLUMNS,
      ])
      .where("api_keys.hash", "=", hash)
      .where("api_keys.revoked_at", "is", null)
      .executeTakeFirst();
    if (!row) return null;
    return {
      key: toKey(row),
      user: ownerOf(row),
    };
  }

  async listKeys(userId: string): Promise<ApiKey[]> {
    const rows = await this.db
      .selectFrom("api_keys")
      .selectAll()
      .where("user_id", "=", userId)
      .orderBy("created_at", "desc")
      .execute();
    return rows.map(toKey);
  }

  async revokeKey(by: { id: string; userId?: string } | { hash: string }): Promise<ApiKey | null> {
    const now = new Date().toISOString();
    let query = this.db.updateTable("api_keys").set({ revoked_at: now }).where("revoked_at", "is", null);
    query = "id" in by ? query.where("id", "=", by.id) : query.where("hash", "=", by.hash);
    if ("id" in by && by.userId !== undefined) query = query.where("user_id", "=", by.userId);
    const row = await query.returningAll().executeTakeFirst();
    return row ? toKey(row) : null;
  }

  async touchKey(id: string, at: string): Promise<void> {
    await this.db.updateTable("api_keys").set({ last_used_at: at }).where("id", "=", id).execute();
  }

  async createFile(f: FileRecord): Promise<void> {
    await this.db
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
    options: { limit: number; cursor?: string | undefined },
  ): Promise<FilePage> {
    let query = this.db.selectFrom("files").selectAll().where("user_id", "=", userId);
    if (options.cursor !== undefined) {
      const after = decodeCursor(options.cursor);
      if (after) {
        query = query.where((eb) =>
          eb.or([
            eb("created_at", "<", after.createdAt),
            eb.and([eb("created_at", "=", after.createdAt), eb("id", "<", after.id)]),
          ]),
        );
      }
    }
    const rows = await query
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .limit(options.limit + 1)
      .execute();
    const files = rows.slice(0, options.limit).map(toFile);
    const last = files.at(-1);
    return { files, nextCursor: rows.length > options.limit && last ? encodeCursor(last) : null };
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

  async claimUnfinishedFile(fileId: string, seenUpdatedAt: string): Promise<FileRecord | null> {
    const row = await this.db
      .updateTable("files")
      .set({ updated_at: new Date().toISOString() })
      .where("id", "=", fileId)
      .where("updated_at", "=", seenUpdatedAt)
      .where("status", "in", ["pending", "processing"])
      .returningAll()
      .executeTakeFirst();
    return row ? toFile(row) : null;
  }

  async updateFile(fileId: string, update: FileUpdate): Promise<FileRecord | null> {
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
    const row = await this.db
      .updateTable("files")
      .set(set)
      .where("id", "=", fileId)
      .returningAll()
      .executeTakeFirst();
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

  async reserveUpload(userId: string, month: string, quota: number): Promise<boolean> {
    await this.db
      .insertInto("usage")
      .values({ user_id: userId, month, uploads: 0 })
      .onConflict((oc) => oc.columns(["user_id", "month"]).doNothing())
      .execute();
    let query = this.db
      .updateTable("usage")
      .set((eb) => ({ uploads: eb("uploads", "+", 1) }))
      .where("user_id", "=", userId)
      .where("month", "=", month);
    if (quota > 0) query = query.where("uploads", "<", quota);
    const result = await query.executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async releaseUpload(userId: string, month: string): Promise<void> {
    await this.db
      .updateTable("usage")
      .set((eb) => ({ uploads: eb("uploads", "-", 1) }))
      .where("user_id", "=", userId)
      .where("month", "=", month)
      .where("uploads", ">", 0)
      .execute();
  }

  async uploadsThisMonth(userId: string, month: string): Promise<number> {
    const row = await this.db
      .selectFrom("usage")
      .select("uploads")
      .where("user_id", "=", userId)
      .where("month", "=", month)
      .executeTakeFirst();
    return row ? Number(row.uploads) : 0;
  }
}
