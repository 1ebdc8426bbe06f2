import { PostgresAdapter, sql, type Kysely, type Migration, type MigrationProvider } from "kysely";
import { KEY_CHANGES_CHANNEL } from "./postgres-key-changes.ts";

/**
 * One set of migrations for every dialect: only portable column types (text, integer, bigint,
 * double precision) and ISO-8601 text timestamps, so SQLite and Postgres hold the same data.
 * 0010 is the one dialect's own: Postgres triggers that hold no data (see it).
 * Never edit a migration that has shipped; add a new one.
 */
const migrations: Record<string, Migration> = {
  "0001_initial": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("users")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("email", "text", (c) => c.notNull().unique())
        .addColumn("plan", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();

      await db.schema
        .createTable("api_keys")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("type", "text", (c) => c.notNull())
        .addColumn("display_prefix", "text", (c) => c.notNull())
        .addColumn("hash", "text", (c) => c.notNull().unique())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("last_used_at", "text")
        .addColumn("revoked_at", "text")
        .execute();
      await db.schema.createIndex("api_keys_user_idx").on("api_keys").column("user_id").execute();

      await db.schema
        .createTable("files")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
        .addColumn("original_name", "text", (c) => c.notNull())
        .addColumn("file_type", "text", (c) => c.notNull())
        .addColumn("mime_type", "text", (c) => c.notNull())
        .addColumn("size_bytes", "bigint", (c) => c.notNull())
        .addColumn("blob_key", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("error_code", "text")
        .addColumn("error_message", "text")
        .addColumn("page_count", "integer")
        .addColumn("passage_count", "integer")
        .addColumn("progress", "double precision")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("files_user_created_idx")
        .on("files")
        .columns(["user_id", "created_at", "id"])
        .execute();
      await db.schema.createIndex("files_status_idx").on("files").columns(["status", "created_at"]).execute();

      await db.schema
        .createTable("usage")
        .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
        .addColumn("month", "text", (c) => c.notNull())
        .addColumn("uploads", "integer", (c) => c.notNull().defaultTo(0))
        .addPrimaryKeyConstraint("usage_pk", ["user_id", "month"])
        .execute();
    },
  },
  "0002_file_duration": {
    // Audio and video: how long the recording is, in seconds.
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("files").addColumn("duration_s", "double precision").execute();
    },
  },
  "0003_dashboard_accounts": {
    // Signing in to the dashboard: a password hash per user (null for users made by the CLI until
    // they set one) and server-side sessions, so signing out ends a session everywhere at once.
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("users").addColumn("password_hash", "text").execute();
      await db.schema
        .createTable("sessions")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("expires_at", "text", (c) => c.notNull())
        .addColumn("revoked_at", "text")
        .execute();
      await db.schema.createIndex("sessions_user_idx").on("sessions").column("user_id").execute();
    },
  },
  "0004_file_requeues": {
    // How often a file's started work was re-queued after its process stopped: a file that
    // crashes Locus every time is failed instead of crashing it at every start (FilesService).
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable("files")
        .addColumn("requeues", "integer", (c) => c.notNull().defaultTo(0))
        .execute();
    },
  },
  "0005_file_metadata": {
    // What the uploader said about a file (its `metadata` JSON object, as given), and the same as
    // one row per key and value (lists: per item, see metadataTerms) so the file list can filter
    // on `metadata.<key>=<value>` with an index, in SQLite and PostgreSQL alike.
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable("files")
        .addColumn("metadata", "text", (c) => c.notNull().defaultTo("{}"))
        .execute();
      await db.schema
        .createTable("file_metadata_terms")
        .addColumn("file_id", "text", (c) => c.notNull().references("files.id").onDelete("cascade"))
        .addColumn("user_id", "text", (c) => c.notNull())
        .addColumn("key", "text", (c) => c.notNull())
        .addColumn("value", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("file_metadata_terms_lookup_idx")
        .on("file_metadata_terms")
        .columns(["user_id", "key", "value", "file_id"])
        .execute();
      await db.schema
        .createIndex("file_metadata_terms_file_idx")
        .on("file_metadata_terms")
        .column("file_id")
        .execute();
    },
  },
  "0006_webhooks": {
    // Webhooks (services/webhooks): endpoints per account, one delivery per event and endpoint
    // (unique, so a redelivered event is owed once), and every HTTP attempt for the delivery log.
    // Deliveries are leased (lease_owner, lease_until) so two workers never send one at once.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("webhook_endpoints")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
        .addColumn("url", "text", (c) => c.notNull())
        .addColumn("description", "text", (c) => c.notNull())
        .addColumn("events", "text", (c) => c.notNull())
        .addColumn("secret", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .addColumn("disabled_at", "text")
        .addColumn("disabled_reason", "text")
        .addColumn("last_success_at", "text")
        .execute();
      await db.schema
        .createIndex("webhook_endpoints_user_idx")
        .on("webhook_endpoints")
        .columns(["user_id", "created_at"])
        .execute();
      await db.schema
        .createTable("webhook_deliveries")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("endpoint_id", "text", (c) =>
          c.notNull().references("webhook_endpoints.id").onDelete("cascade"),
        )
        .addColumn("user_id", "text", (c) => c.notNull())
        .addColumn("event_id", "text", (c) => c.notNull())
        .addColumn("event_type", "text", (c) => c.notNull())
        .addColumn("payload", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("max_attempts", "integer", (c) => c.notNull())
        .addColumn("next_attempt_at", "text")
        .addColumn("lease_owner", "text")
        .addColumn("lease_until", "text")
        .addColumn("last_status_code", "integer")
        .addColumn("last_error", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .addColumn("redelivered_at", "text")
        .addUniqueConstraint("webhook_deliveries_event_uq", ["endpoint_id", "event_id"])
        .execute();
      await db.schema
        .createIndex("webhook_deliveries_due_idx")
        .on("webhook_deliveries")
        .columns(["status", "next_attempt_at"])
        .execute();
      await db.schema
        .createIndex("webhook_deliveries_finished_idx")
        .on("webhook_deliveries")
        .columns(["status", "updated_at"])
        .execute();
      await db.schema
        .createIndex("webhook_deliveries_endpoint_idx")
        .on("webhook_deliveries")
        .columns(["endpoint_id", "created_at", "id"])
        .execute();
      await db.schema
        .createTable("webhook_attempts")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("delivery_id", "text", (c) =>
          c.notNull().references("webhook_deliveries.id").onDelete("cascade"),
        )
        .addColumn("attempted_at", "text", (c) => c.notNull())
        .addColumn("status_code", "integer")
        .addColumn("error", "text")
        .addColumn("duration_ms", "integer", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("webhook_attempts_delivery_idx")
        .on("webhook_attempts")
        .columns(["delivery_id", "attempted_at"])
        .execute();
    },
  },
  "0007_daily_usage": {
    // Searches and uploads per user, key and day, for the usage page's chart and per-key counts.
    // key_id is "" for a signed-in dashboard page, so the primary key needs no nullable column;
    // no foreign key on it for that reason (keys are revoked, never deleted).
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("daily_usage")
        .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
        .addColumn("key_id", "text", (c) => c.notNull())
        .addColumn("day", "text", (c) => c.notNull())
        .addColumn("searches", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("uploads", "integer", (c) => c.notNull().defaultTo(0))
        .addPrimaryKeyConstraint("daily_usage_pk", ["user_id", "day", "key_id"])
        .execute();
    },
  },
  "0008_outbox": {
    // The transactional outbox: an upload's processing request is recorded with its file, so a
    // files process that dies after storing the upload delays its processing by seconds, not until
    // the stall sweep. Entries go with their file (a discarded upload is never processed).
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("outbox")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("topic", "text", (c) => c.notNull())
        .addColumn("message", "text", (c) => c.notNull())
        .addColumn("file_id", "text", (c) => c.references("files.id").onDelete("cascade"))
        .addColumn("available_at", "text", (c) => c.notNull())
        .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema.createIndex("outbox_due_idx").on("outbox").column("available_at").execute();
      await db.schema.createIndex("outbox_file_idx").on("outbox").column("file_id").execute();
    },
  },
  "0009_ai_vectors": {
    // Where a ready file's passages stand for ai search when the meaning stage encodes them after
    // the file is ready (FileRecord.aiVectors); null for every file before it, as for files whose
    // passages got their vectors while they were indexed.
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("files").addColumn("ai_vectors", "text").execute();
    },
  },
  "0010_key_change_notices": {
    // Postgres only: a notice on KEY_CHANGES_CHANNEL when a key or its owner changes or goes
    // ("<schema> <table> <id>"), sent by the database on commit whoever made the change (a
    // dashboard, the CLI, an operator's SQL), so gateways may keep key lookups (see
    // watchKeyChanges). Not for last_used_at, which gateways write once a minute per key. SQLite
    // has no notices: the embedded store keeps nothing.
    async up(db: Kysely<unknown>) {
      if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
      await sql`
        create or replace function locus_key_changed() returns trigger language plpgsql as $$
        begin
          perform pg_notify(${sql.lit(KEY_CHANGES_CHANNEL)}, tg_table_schema || ' ' || tg_table_name || ' ' || old.id);
          return null;
        end $$`.execute(db);
      await sql`
        create trigger api_keys_changed
        after update of revoked_at, name, type, hash, user_id or delete on api_keys
        for each row execute function locus_key_changed()`.execute(db);
      await sql`
        create trigger users_changed after update or delete on users
        for each row execute function locus_key_changed()`.execute(db);
    },
  },
  "0011_event_log": {
    // The event log (GET /api/events): every file event of an account, kept for the retention
    // period whether or not an endpoint was told, read newest first per user, pruned by age.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("events")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
        .addColumn("type", "text", (c) => c.notNull())
        .addColumn("occurred_at", "text", (c) => c.notNull())
        .addColumn("payload", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("events_user_occurred_idx")
        .on("events")
        .columns(["user_id", "occurred_at", "id"])
        .execute();
      await db.schema.createIndex("events_occurred_idx").on("events").column("occurred_at").execute();
    },
  },
  "0012_webhook_secret_overlap": {
    // After a rotation the replaced secret signs too, for a while (a second signature), so
    // receivers can switch secrets without refusing a delivery.
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("webhook_endpoints").addColumn("previous_secret", "text").execute();
      await db.schema
        .alterTable("webhook_endpoints")
        .addColumn("previous_secret_expires_at", "text")
        .execute();
    },
  },
};

export const migrationProvider: MigrationProvider = {
  getMigrations: () => Promise.resolve(migrations),
};
