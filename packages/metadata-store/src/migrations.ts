import type { Kysely, Migration, MigrationProvider } from "kysely";

/**
 * One set of migrations for every dialect: only portable column types (text, integer, bigint,
 * double precision) and ISO-8601 text timestamps, so SQLite and Postgres hold the same data.
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
};

export const migrationProvider: MigrationProvider = {
  getMigrations: () => Promise.resolve(migrations),
};
