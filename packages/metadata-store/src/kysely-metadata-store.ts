import { Migrator, sql, type Kysely } from "kysely";
import type { FileStatus } from "@locus/contracts";
import type { ApiKey, KeyType } from "./api-key-store.ts";
import type { FilePage, FileRecord, FileUpdate } from "./file-store.ts";
import { KyselyApiKeyStore } from "./kysely-api-key-store.ts";
import { KyselyFileStore } from "./kysely-file-store.ts";
import { KyselySessionStore } from "./kysely-session-store.ts";
import { KyselyUsageStore } from "./kysely-usage-store.ts";
import { KyselyUserStore } from "./kysely-user-store.ts";
import type { MetadataStore } from "./metadata-store.ts";
import { migrationProvider } from "./migrations.ts";
import type { Database } from "./schema.ts";
import type { Session } from "./session-store.ts";
import type { Plan, User } from "./user-store.ts";

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

/**
 * The data layer shared by every SQL dialect (SQLite now, Postgres in split mode): the lifecycle
 * (migrations, readiness, closing) here, each aggregate's queries in its own store over the same
 * database, which this class hands every call to.
 */
export class KyselyMetadataStore implements MetadataStore {
  // TypeScript-private, not #private: a test makes a store from this one with Object.create(), and
  // the methods below must still find these fields through the prototype.
  private readonly users: KyselyUserStore;
  private readonly sessions: KyselySessionStore;
  private readonly keys: KyselyApiKeyStore;
  private readonly files: KyselyFileStore;
  private readonly usage: KyselyUsageStore;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: KyselyMetadataStoreOptions = {},
  ) {
    this.users = new KyselyUserStore(db);
    this.sessions = new KyselySessionStore(db);
    this.keys = new KyselyApiKeyStore(db);
    this.files = new KyselyFileStore(db);
    this.usage = new KyselyUsageStore(db);
  }

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

  // Users.

  createUser(input: { email: string; plan: Plan }): Promise<User> {
    return this.users.createUser(input);
  }

  findUserByEmail(email: string): Promise<User | null> {
    return this.users.findUserByEmail(email);
  }

  findUserById(id: string): Promise<User | null> {
    return this.users.findUserById(id);
  }

  findCredentials(email: string): Promise<{ user: User; passwordHash: string | null } | null> {
    return this.users.findCredentials(email);
  }

  setPasswordHash(userId: string, passwordHash: string): Promise<void> {
    return this.users.setPasswordHash(userId, passwordHash);
  }

  // Sessions.

  createSession(session: Omit<Session, "revokedAt">): Promise<Session> {
    return this.sessions.createSession(session);
  }

  findActiveSession(id: string, now: string): Promise<{ session: Session; user: User } | null> {
    return this.sessions.findActiveSession(id, now);
  }

  revokeSession(id: string, at: string): Promise<void> {
    return this.sessions.revokeSession(id, at);
  }

  // API keys.

  createKey(input: {
    userId: string;
    name: string;
    type: KeyType;
    displayPrefix: string;
    hash: string;
  }): Promise<ApiKey> {
    return this.keys.createKey(input);
  }

  findActiveKeyByHash(hash: string): Promise<{ key: ApiKey; user: User } | null> {
    return this.keys.findActiveKeyByHash(hash);
  }

  listKeys(userId: string): Promise<ApiKey[]> {
    return this.keys.listKeys(userId);
  }

  revokeKey(by: { id: string; userId?: string } | { hash: string }): Promise<ApiKey | null> {
    return this.keys.revokeKey(by);
  }

  touchKey(id: string, at: string): Promise<void> {
    return this.keys.touchKey(id, at);
  }

  // Files.

  createFile(record: FileRecord): Promise<void> {
    return this.files.createFile(record);
  }

  getFile(userId: string, fileId: string): Promise<FileRecord | null> {
    return this.files.getFile(userId, fileId);
  }

  getFileById(fileId: string): Promise<FileRecord | null> {
    return this.files.getFileById(fileId);
  }

  getFiles(userId: string, fileIds: readonly string[]): Promise<FileRecord[]> {
    return this.files.getFiles(userId, fileIds);
  }

  listFiles(userId: string, options: { limit: number; cursor?: string | undefined }): Promise<FilePage> {
    return this.files.listFiles(userId, options);
  }

  listFilesWithStatus(
    status: FileStatus,
    options: { limit: number; afterId?: string },
  ): Promise<FileRecord[]> {
    return this.files.listFilesWithStatus(status, options);
  }

  listUnfinishedFiles(options: { limit: number; updatedBefore?: string }): Promise<FileRecord[]> {
    return this.files.listUnfinishedFiles(options);
  }

  claimUnfinishedFile(fileId: string, seenUpdatedAt: string): Promise<FileRecord | null> {
    return this.files.claimUnfinishedFile(fileId, seenUpdatedAt);
  }

  updateFile(fileId: string, update: FileUpdate): Promise<FileRecord | null> {
    return this.files.updateFile(fileId, update);
  }

  deleteFile(userId: string, fileId: string): Promise<FileRecord | null> {
    return this.files.deleteFile(userId, fileId);
  }

  // Usage.

  reserveUpload(userId: string, month: string, quota: number): Promise<boolean> {
    return this.usage.reserveUpload(userId, month, quota);
  }

  releaseUpload(userId: string, month: string): Promise<void> {
    return this.usage.releaseUpload(userId, month);
  }

  uploadsThisMonth(userId: string, month: string): Promise<number> {
    return this.usage.uploadsThisMonth(userId, month);
  }
}
