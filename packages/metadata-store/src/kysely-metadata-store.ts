import { Migrator, sql, type Kysely } from "kysely";
import type { ApiKeyStore, KeyChange, KeyChangeFeed, KeyChangeListener } from "./api-key-store.ts";
import type { EventStore } from "./event-store.ts";
import type { FileStore } from "./file-store.ts";
import { KyselyApiKeyStore } from "./kysely-api-key-store.ts";
import { KyselyEventStore } from "./kysely-event-store.ts";
import { KyselyFileStore } from "./kysely-file-store.ts";
import { KyselyOutboxStore } from "./kysely-outbox-store.ts";
import type { OutboxStore } from "./outbox-store.ts";
import { KyselySessionStore } from "./kysely-session-store.ts";
import { KyselyUsageStore } from "./kysely-usage-store.ts";
import { KyselyUserStore } from "./kysely-user-store.ts";
import { KyselyWebhookStore } from "./kysely-webhook-store.ts";
import type { WebhookStore } from "./webhook-store.ts";
import type { MetadataStore } from "./metadata-store.ts";
import { migrationProvider } from "./migrations.ts";
import type { Database } from "./schema.ts";
import type { SessionStore } from "./session-store.ts";
import type { UsageStore } from "./usage-store.ts";
import type { UserStore } from "./user-store.ts";

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
  /**
   * Listens for changes to keys and their owners made by other processes (Postgres: NOTIFY from
   * triggers). Without it, watchKeyChanges() returns null: nobody could tell this process.
   */
  listenForKeyChanges?: (listener: KeyChangeListener) => KeyChangeFeed;
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
  private readonly outbox: KyselyOutboxStore;
  private readonly usage: KyselyUsageStore;
  private readonly webhooks: KyselyWebhookStore;
  private readonly events: KyselyEventStore;
  /** Listeners of watchKeyChanges() in this process. */
  private readonly keyWatchers = new Set<KeyChangeListener>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: KyselyMetadataStoreOptions = {},
  ) {
    this.users = new KyselyUserStore(db);
    this.sessions = new KyselySessionStore(db);
    this.keys = new KyselyApiKeyStore(db);
    this.files = new KyselyFileStore(db);
    this.outbox = new KyselyOutboxStore(db);
    this.usage = new KyselyUsageStore(db);
    this.webhooks = new KyselyWebhookStore(db);
    this.events = new KyselyEventStore(db);
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

  watchKeyChanges(listener: KeyChangeListener): KeyChangeFeed | null {
    if (!this.options.listenForKeyChanges) return null;
    // This process's own changes are told at once, as they return: the database's notice of them
    // follows the commit by a moment, and a revoked key must not pass in between.
    this.keyWatchers.add(listener);
    const feed = this.options.listenForKeyChanges(listener);
    return {
      close: async () => {
        this.keyWatchers.delete(listener);
        await feed.close();
      },
    };
  }

  private tellKeyWatchers(change: KeyChange): void {
    for (const watcher of this.keyWatchers) watcher.changed(change);
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

  // Each aggregate's calls, handed to its store; their signatures are the ports' own.
  // Users.
  createUser: UserStore["createUser"] = (...args) => this.users.createUser(...args);
  findUserByEmail: UserStore["findUserByEmail"] = (...args) => this.users.findUserByEmail(...args);
  findUserById: UserStore["findUserById"] = (...args) => this.users.findUserById(...args);
  findCredentials: UserStore["findCredentials"] = (...args) => this.users.findCredentials(...args);
  setPasswordHash: UserStore["setPasswordHash"] = (...args) => this.users.setPasswordHash(...args);

  // Sessions.
  createSession: SessionStore["createSession"] = (...args) => this.sessions.createSession(...args);
  findActiveSession: SessionStore["findActiveSession"] = (...args) =>
    this.sessions.findActiveSession(...args);
  revokeSession: SessionStore["revokeSession"] = (...args) => this.sessions.revokeSession(...args);

  // API keys.
  createKey: ApiKeyStore["createKey"] = (...args) => this.keys.createKey(...args);
  findActiveKeyByHash: ApiKeyStore["findActiveKeyByHash"] = (...args) =>
    this.keys.findActiveKeyByHash(...args);
  listKeys: ApiKeyStore["listKeys"] = (...args) => this.keys.listKeys(...args);
  revokeKey: ApiKeyStore["revokeKey"] = async (...args) => {
    const revoked = await this.keys.revokeKey(...args);
    if (revoked) this.tellKeyWatchers({ keyId: revoked.id });
    return revoked;
  };
  touchKey: ApiKeyStore["touchKey"] = (...args) => this.keys.touchKey(...args);
  renameKey: ApiKeyStore["renameKey"] = async (...args) => {
    const renamed = await this.keys.renameKey(...args);
    if (renamed) this.tellKeyWatchers({ keyId: renamed.id });
    return renamed;
  };

  // Files.
  createFile: FileStore["createFile"] = (...args) => this.files.createFile(...args);
  getFile: FileStore["getFile"] = (...args) => this.files.getFile(...args);
  getFileById: FileStore["getFileById"] = (...args) => this.files.getFileById(...args);
  getFiles: FileStore["getFiles"] = (...args) => this.files.getFiles(...args);
  listFiles: FileStore["listFiles"] = (...args) => this.files.listFiles(...args);
  listFilesWithStatus: FileStore["listFilesWithStatus"] = (...args) =>
    this.files.listFilesWithStatus(...args);
  listUnfinishedFiles: FileStore["listUnfinishedFiles"] = (...args) =>
    this.files.listUnfinishedFiles(...args);
  claimUnfinishedFile: FileStore["claimUnfinishedFile"] = (...args) =>
    this.files.claimUnfinishedFile(...args);
  updateFile: FileStore["updateFile"] = (...args) => this.files.updateFile(...args);
  deleteFile: FileStore["deleteFile"] = (...args) => this.files.deleteFile(...args);

  // The outbox of the files' messages.
  claimFileOutbox: OutboxStore["claimFileOutbox"] = (...args) => this.outbox.claimFileOutbox(...args);
  claimDueOutboxEntries: OutboxStore["claimDueOutboxEntries"] = (...args) =>
    this.outbox.claimDueOutboxEntries(...args);
  deleteOutboxEntry: OutboxStore["deleteOutboxEntry"] = (...args) => this.outbox.deleteOutboxEntry(...args);
  countOutboxEntries: OutboxStore["countOutboxEntries"] = (...args) =>
    this.outbox.countOutboxEntries(...args);

  // Usage.
  reserveUpload: UsageStore["reserveUpload"] = (...args) => this.usage.reserveUpload(...args);
  releaseUpload: UsageStore["releaseUpload"] = (...args) => this.usage.releaseUpload(...args);
  uploadsThisMonth: UsageStore["uploadsThisMonth"] = (...args) => this.usage.uploadsThisMonth(...args);
  recordActivity: UsageStore["recordActivity"] = (...args) => this.usage.recordActivity(...args);
  dailyActivity: UsageStore["dailyActivity"] = (...args) => this.usage.dailyActivity(...args);

  // Webhooks.
  createWebhookEndpoint: WebhookStore["createWebhookEndpoint"] = (...args) =>
    this.webhooks.createWebhookEndpoint(...args);
  listWebhookEndpoints: WebhookStore["listWebhookEndpoints"] = (...args) =>
    this.webhooks.listWebhookEndpoints(...args);
  getWebhookEndpoint: WebhookStore["getWebhookEndpoint"] = (...args) =>
    this.webhooks.getWebhookEndpoint(...args);
  updateWebhookEndpoint: WebhookStore["updateWebhookEndpoint"] = (...args) =>
    this.webhooks.updateWebhookEndpoint(...args);
  deleteWebhookEndpoint: WebhookStore["deleteWebhookEndpoint"] = (...args) =>
    this.webhooks.deleteWebhookEndpoint(...args);
  endpointsFor: WebhookStore["endpointsFor"] = (...args) => this.webhooks.endpointsFor(...args);
  enqueueDelivery: WebhookStore["enqueueDelivery"] = (...args) => this.webhooks.enqueueDelivery(...args);
  claimDueDeliveries: WebhookStore["claimDueDeliveries"] = (...args) =>
    this.webhooks.claimDueDeliveries(...args);
  recordAttempt: WebhookStore["recordAttempt"] = (...args) => this.webhooks.recordAttempt(...args);
  disableWebhookEndpoint: WebhookStore["disableWebhookEndpoint"] = (...args) =>
    this.webhooks.disableWebhookEndpoint(...args);
  listDeliveries: WebhookStore["listDeliveries"] = (...args) => this.webhooks.listDeliveries(...args);
  redeliver: WebhookStore["redeliver"] = (...args) => this.webhooks.redeliver(...args);
  pruneDeliveries: WebhookStore["pruneDeliveries"] = (...args) => this.webhooks.pruneDeliveries(...args);
  expireHeldDeliveries: WebhookStore["expireHeldDeliveries"] = (...args) =>
    this.webhooks.expireHeldDeliveries(...args);

  recordEvent: EventStore["recordEvent"] = (...args) => this.events.recordEvent(...args);
  listEvents: EventStore["listEvents"] = (...args) => this.events.listEvents(...args);
  getEvent: EventStore["getEvent"] = (...args) => this.events.getEvent(...args);
  pruneEvents: EventStore["pruneEvents"] = (...args) => this.events.pruneEvents(...args);
}
