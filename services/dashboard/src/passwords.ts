import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from "node:crypto";
import { availableParallelism } from "node:os";
import pLimit, { type LimitFunction } from "p-limit";
import { LocusError } from "@locus/contracts";

/**
 * Passwords are stored as scrypt hashes (RFC 7914, memory-hard, in Node's own crypto: no native
 * add-on to build): N = 2^15, r = 8, p = 1, the parameters OWASP recommends, about 50 ms and 32 MB
 * a hash here. The stored form names its parameters, so they can be raised later without
 * invalidating existing hashes: `scrypt$32768$8$1$<salt>$<hash>` (base64url).
 */
const PARAMS = { N: 2 ** 15, r: 8, p: 1 };
const KEY_LENGTH = 32;

export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 200;

const derive = (password: string, salt: Buffer, options: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) => {
    // maxmem above 128 × N × r (32 MB), or Node refuses these parameters.
    scrypt(
      password.normalize("NFKC"),
      salt,
      KEY_LENGTH,
      { ...options, maxmem: 64 * 1024 * 1024 },
      (err, key) => (err ? reject(err) : resolve(key)),
    );
  });

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, PARAMS);
  return ["scrypt", PARAMS.N, PARAMS.r, PARAMS.p, salt.toString("base64url"), key.toString("base64url")].join(
    "$",
  );
}

/** True when the password matches the stored hash; false for any other hash or a malformed one. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split("$");
  if (scheme !== "scrypt" || !salt || !hash) return false;
  const params = { N: Number(n), r: Number(r), p: Number(p) };
  if (![params.N, params.r, params.p].every((v) => Number.isInteger(v) && v > 0)) return false;
  const expected = Buffer.from(hash, "base64url");
  const actual = await derive(password, Buffer.from(salt, "base64url"), params);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/**
 * Why a new password is refused, or null. Length is what makes a password hard to guess (NIST SP
 * 800-63B): at least 10 characters, any characters; plus a few that are long but guessed first.
 */
export function passwordProblem(password: string, email: string): string | null {
  if (password.length < PASSWORD_MIN_LENGTH)
    return `The password needs at least ${PASSWORD_MIN_LENGTH} characters.`;
  if (password.length > PASSWORD_MAX_LENGTH)
    return `The password can have at most ${PASSWORD_MAX_LENGTH} characters.`;
  const lower = password.toLowerCase();
  if (lower === email.toLowerCase() || lower === email.split("@")[0]?.toLowerCase()) {
    return "The password must not be your email address.";
  }
  if (new Set(lower).size < 4 || /^(?:0123456789|1234567890|password|qwerty)/.test(lower)) {
    return "That password is too easy to guess; try a few unrelated words.";
  }
  return null;
}

/**
 * A hash to check when the email is unknown, so that signing in takes as long for an unknown
 * address as for a known one with a wrong password (no timing hint about which emails exist).
 */
let dummy: Promise<string> | undefined;
export function dummyHash(): Promise<string> {
  dummy ??= hashPassword(randomBytes(16).toString("hex"));
  return dummy;
}

export interface PasswordWorkLimits {
  /** Hashes computed at once (each takes a libuv thread and 32 MB). */
  concurrency: number;
  /** Hashes waiting their turn; past this a request is refused with 503 and Retry-After. */
  maxWaiting: number;
}

export const DEFAULT_PASSWORD_WORK: PasswordWorkLimits = {
  // libuv's pool has 4 threads, shared with file and DNS work: never take them all.
  concurrency: Math.max(1, Math.min(3, availableParallelism())),
  maxWaiting: 32,
};

/**
 * Bounds the scrypt work of sign-ins and sign-ups. scrypt is slow and memory-hard on purpose, which
 * makes it a lever: a flood of sign-ins, each for another email from another address so that no
 * limiter stops them, would otherwise queue hashes without end, each request waiting longer and
 * holding its memory. Here a few run at once, a bounded number wait (under a second's worth), and
 * the rest get a 503 with Retry-After at once, while everything else the process serves goes on.
 */
export class PasswordWork {
  private readonly limit: LimitFunction;

  constructor(private readonly limits: PasswordWorkLimits = DEFAULT_PASSWORD_WORK) {
    this.limit = pLimit(limits.concurrency);
  }

  run<T>(work: () => Promise<T>): Promise<T> {
    if (
      this.limit.activeCount + this.limit.pendingCount >=
      this.limits.concurrency + this.limits.maxWaiting
    ) {
      return Promise.reject(
        new LocusError(
          "unavailable",
          "Too many sign-ins are being checked right now; try again in a second.",
          {
            headers: { "Retry-After": "1" },
          },
        ),
      );
    }
    return this.limit(work);
  }
}
