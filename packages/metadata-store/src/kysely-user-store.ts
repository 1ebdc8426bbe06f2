import { randomUUID } from "node:crypto";
import type { Kysely, Selectable } from "kysely";
import type { Database, UsersTable } from "./schema.ts";
import type { Plan, User, UserStore } from "./user-store.ts";

export const toUser = (r: Omit<Selectable<UsersTable>, "password_hash">): User => ({
  id: r.id,
  email: r.email,
  plan: r.plan as Plan,
  createdAt: r.created_at,
});

/** The owning user's columns, for the queries that join a key or a session to its user. */
export const OWNER_COLUMNS = [
  "users.email as user_email",
  "users.plan as user_plan",
  "users.created_at as user_created_at",
] as const;

export const ownerOf = (r: {
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

/** Users over the shared Kysely database, in any dialect. */
export class KyselyUserStore implements UserStore {
  constructor(private readonly db: Kysely<Database>) {}

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
}
