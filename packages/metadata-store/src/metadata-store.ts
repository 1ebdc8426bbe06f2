import type { ApiKeyStore, KeyChangeFeed, KeyChangeListener } from "./api-key-store.ts";
import type { EventStore } from "./event-store.ts";
import type { FileStore } from "./file-store.ts";
import type { OutboxStore } from "./outbox-store.ts";
import type { SessionStore } from "./session-store.ts";
import type { UsageStore } from "./usage-store.ts";
import type { UserStore } from "./user-store.ts";
import type { WebhookStore } from "./webhook-store.ts";

export type { Plan, User, UserStore } from "./user-store.ts";
export type { Session, SessionStore } from "./session-store.ts";
export type {
  ApiKey,
  ApiKeyStore,
  KeyChange,
  KeyChangeFeed,
  KeyChangeListener,
  KeyType,
} from "./api-key-store.ts";
export type {
  ClaimedFile,
  FileExpectation,
  FilePage,
  FileRecord,
  FileRecordReader,
  FileStore,
  FileUpdate,
} from "./file-store.ts";
export type { ActivityKind, DailyActivity, UsageStore } from "./usage-store.ts";
export type { NewOutboxEntry, OutboxEntry, OutboxStore } from "./outbox-store.ts";
export type {
  AttemptOutcome,
  ClaimedDelivery,
  DeliveryPage,
  DeliveryStatus,
  NewWebhookEndpoint,
  WebhookAttempt,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointChange,
  WebhookStore,
} from "./webhook-store.ts";
export type { EventPage, EventStore, StoredEvent } from "./event-store.ts";

/**
 * Users, sessions, API keys, file records (and the outbox of their messages), usage, and webhook
 * endpoints with their deliveries, and the event log: one port per aggregate, for consumers that need only some of
 * them, and this whole store with its lifecycle. Embedded: SQLite; split: Postgres. Both through
 * one Kysely data layer and one set of migrations.
 */
export interface MetadataStore
  extends UserStore, SessionStore, ApiKeyStore, FileStore, OutboxStore, UsageStore, WebhookStore, EventStore {
  /** Brings the schema up to date; safe to call from every process at start. */
  migrate(): Promise<void>;
  /**
   * Tells `listener` of every change to keys and their owners, made by this process or any other
   * sharing the store, or returns null where the store cannot tell of other processes' changes
   * (SQLite: the CLI writes the same file with no way to say so), so nothing may be kept.
   */
  watchKeyChanges(listener: KeyChangeListener): KeyChangeFeed | null;
  /** Throws when the store cannot be used (for /readyz). */
  check(): Promise<void>;
  close(): Promise<void>;
}
