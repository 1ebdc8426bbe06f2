import type { User } from "./user-store.ts";

/** A signed-in dashboard session; the cookie carries its id, the store decides if it still holds. */
export interface Session {
  id: string;
  userId: string;
  createdAt: string;
  expiresAt: string;
  revokedAt: string | null;
}

/** The sessions aggregate: dashboard sign-ins, each found with its user while it holds. */
export interface SessionStore {
  createSession(session: Omit<Session, "revokedAt">): Promise<Session>;
  /** The session and its user, when it exists, is not revoked and has not expired at `now`. */
  findActiveSession(id: string, now: string): Promise<{ session: Session; user: User } | null>;
  revokeSession(id: string, at: string): Promise<void>;
}
