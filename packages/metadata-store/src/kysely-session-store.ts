import type { Kysely } from "kysely";
import { OWNER_COLUMNS, ownerOf } from "./kysely-user-store.ts";
import type { Database } from "./schema.ts";
import type { Session, SessionStore } from "./session-store.ts";
import type { User } from "./user-store.ts";

/** Dashboard sessions over the shared Kysely database, in any dialect. */
export class KyselySessionStore implements SessionStore {
  constructor(private readonly db: Kysely<Database>) {}

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
}
