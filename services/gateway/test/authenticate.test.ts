import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import express from "express";
import { errorHandler } from "@locus/http";
import { createSqliteMetadataStore, type KeyType, type KyselyMetadataStore } from "@locus/metadata-store";
import { createLogger } from "@locus/runtime";
import { generateApiKey, hashApiKey } from "@locus/metadata-store";
import { authenticate, principalOf } from "../src/authenticate.ts";

/**
 * Bearer-key authentication as a client meets it: the real middleware and error handler in an
 * express app on a loopback port, keys made and stored as the CLI and the dashboard make them, in
 * a SQLite store.
 */
const logger = createLogger("test", "silent");
let dir: string;
let store: KyselyMetadataStore;
let server: Server;
let baseUrl: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "locus-authenticate-"));
  store = createSqliteMetadataStore(join(dir, "metadata.sqlite"));
  await store.migrate();
  const app = express();
  app.get("/whoami", authenticate(store, store, logger), (_req, res) => {
    const principal = principalOf(res);
    res.json({
      userId: principal.user.id,
      keyId: principal.key?.id ?? null,
      sandbox: principal.sandbox,
      sessionId: principal.sessionId,
    });
  });
  app.use(errorHandler(logger));
  server = app.listen(0, "127.0.0.1");
  await new Promise<void>((resolve) => server.once("listening", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A user with a new key of `type`, stored by its hash (as `locus keys create` does). */
async function userWithKey(type: KeyType) {
  const user = await store.createUser({ email: `${randomUUID()}@example.test`, plan: "pro" });
  const generated = generateApiKey(type);
  const key = await store.createKey({
    userId: user.id,
    name: `${type} key`,
    type,
    displayPrefix: generated.displayPrefix,
    hash: generated.hash,
  });
  return { user, key, secret: generated.key };
}

async function whoami(authorization?: string) {
  const response = await fetch(`${baseUrl}/whoami`, {
    headers: authorization === undefined ? {} : { authorization },
  });
  const text = await response.text();
  return {
    status: response.status,
    challenge: response.headers.get("www-authenticate"),
    code: response.headers.get("x-locus-error-code"),
    text,
    body: JSON.parse(text) as Record<string, unknown>,
  };
}

describe("refused with 401 and a Bearer challenge", () => {
  it("without an Authorization header", async () => {
    const r = await whoami();
    expect(r.status).toBe(401);
    expect(r.challenge).toBe('Bearer realm="locus"');
    expect(r.code).toBe("unauthorized");
    expect(r.body.detail).toContain("Missing API key");
  });

  it("with an Authorization header of only spaces", async () => {
    const r = await whoami("   ");
    expect(r.status).toBe(401);
    expect(r.challenge).toBe('Bearer realm="locus"');
  });

  it.each([
    ["another scheme", `Basic ${Buffer.from("user:pass").toString("base64")}`],
    ["Bearer without a key", "Bearer"],
    ["a key too short", "Bearer sk_live_abc"],
    ["a key of no known type", `Bearer sk_prod_${"a".repeat(32)}`],
    ["a key with a character outside base64url", `Bearer sk_live_${"a".repeat(31)}+`],
    ["two tokens", `Bearer sk_live_${"a".repeat(32)} sk_live_${"b".repeat(32)}`],
  ])("with a malformed header (%s): error=invalid_request", async (_what, header) => {
    const r = await whoami(header);
    expect(r.status).toBe(401);
    expect(r.challenge).toBe('Bearer realm="locus", error="invalid_request"');
    expect(r.body.detail).toContain("Malformed Authorization header");
  });

  it("with a well-formed key that was never issued: error=invalid_token", async () => {
    const r = await whoami(`Bearer ${generateApiKey("live").key}`);
    expect(r.status).toBe(401);
    expect(r.challenge).toBe('Bearer realm="locus", error="invalid_token"');
    expect(r.body.detail).toBe("Invalid API key: it does not exist or has been revoked.");
  });

  it("with a revoked key, from the request after the revocation on", async () => {
    const { key, secret } = await userWithKey("live");
    expect((await whoami(`Bearer ${secret}`)).status).toBe(200);
    await store.revokeKey({ id: key.id });
    const r = await whoami(`Bearer ${secret}`);
    expect(r.status).toBe(401);
    expect(r.challenge).toBe('Bearer realm="locus", error="invalid_token"');
  });

  it("with a key whose stored type is not the type its prefix claims", async () => {
    // A test key's secret, stored as a live key: the prefix decides the sandbox, so they must agree.
    const user = await store.createUser({ email: `${randomUUID()}@example.test`, plan: "pro" });
    const generated = generateApiKey("test");
    await store.createKey({
      userId: user.id,
      name: "mislabelled",
      type: "live",
      displayPrefix: generated.displayPrefix,
      hash: generated.hash,
    });
    const r = await whoami(`Bearer ${generated.key}`);
    expect(r.status).toBe(401);
    expect(r.challenge).toBe('Bearer realm="locus", error="invalid_token"');
  });

  it("never echoing the key it was sent", async () => {
    const { key, secret } = await userWithKey("live");
    await store.revokeKey({ hash: hashApiKey(secret) });
    const r = await whoami(`Bearer ${secret}`);
    expect(r.status).toBe(401);
    expect(r.text).not.toContain(secret);
    expect(r.text).not.toContain(key.displayPrefix);
  });
});

describe("accepted", () => {
  it("a live key acts as its user, outside the sandbox", async () => {
    const { user, key, secret } = await userWithKey("live");
    const r = await whoami(`Bearer ${secret}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ userId: user.id, keyId: key.id, sandbox: false, sessionId: null });
    expect(r.challenge).toBeNull();
  });

  it("a test key acts as its user, in the sandbox", async () => {
    const { user, key, secret } = await userWithKey("test");
    const r = await whoami(`Bearer ${secret}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ userId: user.id, keyId: key.id, sandbox: true, sessionId: null });
  });

  it("whatever the case of the scheme and the spaces before the key", async () => {
    const { user, secret } = await userWithKey("live");
    const r = await whoami(`bearer   ${secret}  `);
    expect(r.status).toBe(200);
    expect(r.body.userId).toBe(user.id);
  });

  it("revoking one of a user's keys leaves the other working", async () => {
    const first = await userWithKey("live");
    const second = generateApiKey("live");
    const secondKey = await store.createKey({
      userId: first.user.id,
      name: "second",
      type: "live",
      displayPrefix: second.displayPrefix,
      hash: second.hash,
    });
    await store.revokeKey({ id: first.key.id, userId: first.user.id });
    expect((await whoami(`Bearer ${first.secret}`)).status).toBe(401);
    const r = await whoami(`Bearer ${second.key}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ userId: first.user.id, keyId: secondKey.id });
  });

  it("records when the key was last used", async () => {
    const { user, key, secret } = await userWithKey("live");
    expect(key.lastUsedAt).toBeNull();
    const before = new Date().toISOString();
    expect((await whoami(`Bearer ${secret}`)).status).toBe(200);
    // Recorded after the response, without holding it up: wait for the write (a generous deadline:
    // on a busy CI the write may take seconds to land).
    let lastUsedAt: string | null = null;
    for (const deadline = Date.now() + 20_000; lastUsedAt === null && Date.now() < deadline;) {
      lastUsedAt = (await store.listKeys(user.id)).find((k) => k.id === key.id)?.lastUsedAt ?? null;
      if (lastUsedAt === null) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(lastUsedAt).not.toBeNull();
    expect(lastUsedAt! >= before).toBe(true);
  });
});
