export type Plan = "free" | "pro" | "enterprise";

export interface User {
  id: string;
  email: string;
  plan: Plan;
  createdAt: string;
}

/** The users aggregate: accounts and the password hash they sign in to the dashboard with. */
export interface UserStore {
  createUser(input: { email: string; plan: Plan }): Promise<User>;
  findUserByEmail(email: string): Promise<User | null>;
  findUserById(id: string): Promise<User | null>;
  /** The user and their password hash (null when none is set), for signing in. */
  findCredentials(email: string): Promise<{ user: User; passwordHash: string | null } | null>;
  setPasswordHash(userId: string, passwordHash: string): Promise<void>;
}
