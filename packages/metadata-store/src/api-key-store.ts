import type { User } from "./user-store.ts";

export type KeyType = "live" | "test";

export interface ApiKey {
  id: string;
  userId: string;
  name: string;
  type: KeyType;
  /** What people see of a key: its type prefix and a few characters, never enough to use it. */
  displayPrefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** The API keys aggregate: keys stored by their hash, each found with its owner while unrevoked. */
export interface ApiKeyStore {
  /** Stores a key by its hash; the key itself is never stored. */
  createKey(input: {
    userId: string;
    name: string;
    type: KeyType;
    displayPrefix: string;
    hash: string;
  }): Promise<ApiKey>;
  /** The unrevoked key with this hash and its owner, or null. */
  findActiveKeyByHash(hash: string): Promise<{ key: ApiKey; user: User } | null>;
  listKeys(userId: string): Promise<ApiKey[]>;
  /**
   * Revokes by key id (of that user only, when `userId` is given) or by key hash; returns the
   * revoked key, or null when none matched.
   */
  revokeKey(by: { id: string; userId?: string } | { hash: string }): Promise<ApiKey | null>;
  touchKey(id: string, at: string): Promise<void>;
  /** Renames a key of this user (revoked or not); returns it renamed, or null when none matched. */
  renameKey(input: { id: string; userId: string; name: string }): Promise<ApiKey | null>;
}

/** A key, or its owner, that changed (revoked, renamed, re-planned, deleted): by id. */
export type KeyChange = { keyId: string } | { userId: string };

/**
 * Told when keys or their owners change, by any process sharing the store, so that whoever keeps
 * key lookups (the gateway) can drop them. Between lost() and the next live(), changes go unheard.
 */
export interface KeyChangeListener {
  changed(change: KeyChange): void;
  /** Listening (again): changes from now on are heard; any made before may not have been. */
  live(): void;
  /** Listening broke off (the database went away); it resumes on its own. */
  lost(error: Error): void;
}

/** A subscription to key changes; close() ends it. */
export interface KeyChangeFeed {
  close(): Promise<void>;
}
