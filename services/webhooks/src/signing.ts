import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): a `whsec_` secret holding a
 * base64 key; each attempt is signed over "<webhook-id>.<webhook-timestamp>.<body>" with
 * HMAC-SHA256 and sent as `webhook-signature: v1,<base64>`, so any Standard Webhooks library
 * (the `standardwebhooks` npm package, Svix's) verifies it. For a while after a rotation the
 * header holds a second signature, by the replaced secret, space-separated as the specification
 * allows: a receiver that still has the old secret accepts the delivery too.
 */
const SECRET_PREFIX = "whsec_";

/** A new endpoint secret: 24 random bytes, as Svix makes them. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(24).toString("base64");
}

function keyOf(secret: string): Buffer {
  return Buffer.from(
    secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
    "base64",
  );
}

/** `v1,<base64 HMAC-SHA256>` of one attempt. */
export function signWebhook(secret: string, id: string, timestampS: number, body: string): string {
  const mac = createHmac("sha256", keyOf(secret)).update(`${id}.${timestampS}.${body}`).digest("base64");
  return `v1,${mac}`;
}

type RotatedSecrets = {
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: string | null;
};

/** Until when the replaced secret still signs, seen at `now`; null when it no longer does (or there is none). */
export function previousSecretSignsUntil(endpoint: RotatedSecrets, now: Date): string | null {
  const until = endpoint.previousSecret === null ? null : endpoint.previousSecretExpiresAt;
  return until !== null && Date.parse(until) > now.getTime() ? until : null;
}

/** The secrets that sign an attempt at `now`: the endpoint's, and the replaced one while it overlaps. */
export function signingSecrets(endpoint: RotatedSecrets, now: Date): string[] {
  const { secret, previousSecret } = endpoint;
  return previousSecret !== null && previousSecretSignsUntil(endpoint, now) !== null
    ? [secret, previousSecret]
    : [secret];
}

/**
 * The headers of one attempt: its id (the same on every attempt), the time it was signed, and a
 * signature by each secret.
 */
export function webhookHeaders(
  secrets: readonly string[],
  id: string,
  body: string,
  now: Date,
): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": secrets.map((secret) => signWebhook(secret, id, timestamp, body)).join(" "),
  };
}

/** Whether any `v1,` signature in the header is this body's (space-separated, as rotation sends). */
export function verifyWebhook(
  secret: string,
  id: string,
  timestampS: number,
  body: string,
  header: string,
): boolean {
  const expected = Buffer.from(signWebhook(secret, id, timestampS, body));
  return header.split(" ").some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
