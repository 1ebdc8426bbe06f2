import { randomUUID } from "node:crypto";
import type { Kysely, Selectable } from "kysely";
import type { ApiKey, ApiKeyStore, KeyType } from "./api-key-store.ts";
import { OWNER_COLUMNS, ownerOf } from "./kysely-user-store.ts";
import type { ApiKeysTable, Database } from "./schema.ts";
import type { User } from "./user-store.ts";

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

/** API keys over the shared Kysely database, in any dialect. */
export class KyselyApiKeyStore implements ApiKeyStore {
  constructor(private readonly db: Kysely<Database>) {}

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

  async renameKey(input: { id: string; userId: string; name: string }): Promise<ApiKey | null> {
    const row = await this.db
      .updateTable("api_keys")
      .set({ name: input.name })
      .where("id", "=", input.id)
      .where("user_id", "=", input.userId)
      .returningAll()
      .executeTakeFirst();
    return row ? toKey(row) : null;
  }
}
