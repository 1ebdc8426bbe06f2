import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { KyselyMetadataStore } from "./kysely-metadata-store.ts";
import type { Database } from "./schema.ts";

/**
 * The embedded metadata store: one SQLite file. WAL lets the CLI write (create keys, revoke) while
 * the server reads, and busy_timeout makes writers wait for each other instead of failing.
 */
export function createSqliteMetadataStore(path: string): KyselyMetadataStore {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const database = new BetterSqlite3(path);
  database.pragma("journal_mode = WAL");
  database.pragma("busy_timeout = 5000");
  database.pragma("foreign_keys = ON");
  database.pragma("synchronous = NORMAL");
  return new KyselyMetadataStore(new Kysely<Database>({ dialect: new SqliteDialect({ database }) }));
}
