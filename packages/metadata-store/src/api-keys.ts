import { createHash, randomBytes } from "node:crypto";
import type { KeyType } from "./api-key-store.ts";

/** sk_live_ or sk_test_, then 32 characters of base64url (192 random bits). */
const KEY_PATTERN = /^sk_(live|test)_[A-Za-z0-9_-]{32}$/;

export interface NewApiKey {
  /** The full key: shown once, never stored. */
  key: string;
  hash: string;
  displayPrefix: string;
}

/**
 * Keys carry 192 random bits, so a plain SHA-256 is enough to store them safely: there is no
 * password to guess, and a lookup by hash stays one indexed query on every request.
 */
export const hashApiKey = (key: string): string => createHash("sha256").update(key, "utf8").digest("hex");

export function generateApiKey(type: KeyType): NewApiKey {
  const key = `sk_${type}_${randomBytes(24).toString("base64url")}`;
  return { key, hash: hashApiKey(key), displayPrefix: key.slice(0, 12) };
}

/** The key's type when it is shaped like a Locus key, null otherwise. */
export function keyTypeOf(key: string): KeyType | null {
  const m = KEY_PATTERN.exec(key);
  return m ? (m[1] as KeyType) : null;
}
