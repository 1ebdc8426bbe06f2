import { readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import express, { Router, type Request, type Response } from "express";
import { Errors, LocusError } from "@locus/contracts";
import { clientAddress, listedFiles, type LimiterCounters } from "@locus/http";
import { generateApiKey, type ApiKey, type MetadataStore, type Plan } from "@locus/metadata-store";
import type { Logger } from "@locus/runtime";
import type {
  DashboardKey,
  DashboardKeyUsage,
  DashboardSession,
  DashboardUsage,
  DashboardUsageDay,
  NewDashboardKey,
} from "./api-types.ts";
import {
  dummyHash,
  hashPassword,
  passwordProblem,
  PasswordWork,
  verifyPassword,
  type PasswordWorkLimits,
} from "./passwords.ts";
import type { DashboardSessions } from "./sessions.ts";
import { DEFAULT_SIGNIN_LIMITS, DEFAULT_SIGNUP_LIMITS, SignInLimiter } from "./signin-limiter.ts";

export interface DashboardDeps {
  store: MetadataStore;
  sessions: DashboardSessions;
  logger: Logger;
  rateLimits: Record<Plan, number>;
  monthlyUploadQuota: Record<Plan, number>;
  maxUploadBytes: number;
  /** Accounts one client address may create in an hour (default 10). */
  signUpsPerHour?: number;
  /** Where sign-ins and sign-ups are counted (shared by every gateway, or not); in memory without it. */
  limiterCounters?: LimiterCounters | undefined;
  /**
   * Where previews come from when the blob store serves them itself (the S3 endpoint's origin, as
   * in its presigned links); unset, Locus serves them and the page loads from its own origin only.
   */
  previewOrigin?: string | undefined;
  /** How much password hashing runs and waits at once (defaults: DEFAULT_PASSWORD_WORK). */
  passwordWork?: PasswordWorkLimits;
  /** What this server cannot do now, shown on every page (see DashboardSession.notices). */
  notices?: () => Promise<string[]>;
}

const PUBLIC_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "public");
const PDFJS_DIR = dirname(createRequire(import.meta.url).resolve("pdfjs-dist/build/pdf.min.mjs"));
const MAX_ACTIVE_KEYS = 100;
/** How many days (today included) the usage page charts. */
const USAGE_DAYS = 30;
const DAY_MS = 24 * 60 * 60 * 1000;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * The page's headers: its own scripts and styles only (no CDN, no inline script), and previews from
 * where the blob store serves them: Locus itself, or the S3 endpoint of its presigned links.
 */
function contentSecurityPolicy(previewOrigin: string | undefined): string {
  const previews = previewOrigin ? ` ${previewOrigin}` : "";
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self' blob: data:${previews}`,
    `media-src 'self' blob:${previews}`,
    `connect-src 'self'${previews}`,
    "worker-src 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
  ].join("; ");
}

/** The page's own files; index.html is served at /dashboard only, with its headers. */
const ASSETS: Record<string, string> = {
  "app.js": "text/javascript",
  "styles.css": "text/css",
  "favicon.svg": "image/svg+xml",
  // favicon.svg drawn at 32 px (sharp) in an ICO container: what browsers ask /favicon.ico for.
  "favicon.ico": "image/x-icon",
};
/** The modules app.js imports: every script in public/js (no build step), as JavaScript. */
const MODULES: Record<string, string> = Object.fromEntries(
  readdirSync(join(PUBLIC_DIR, "js"))
    .filter((file) => file.endsWith(".js"))
    .map((file) => [file, "text/javascript"]),
);
/** pdf.js, from the npm package, to show PDF previews at a page: served here, never from a CDN. */
const PDFJS: Record<string, string> = {
  "pdf.min.mjs": "text/javascript",
  "pdf.worker.min.mjs": "text/javascript",
};

const keyView = (k: ApiKey): DashboardKey => ({
  id: k.id,
  name: k.name,
  type: k.type,
  prefix: k.displayPrefix,
  created_at: k.createdAt,
  last_used_at: k.lastUsedAt,
  status: k.revokedAt ? "revoked" : "active",
  revoked_at: k.revokedAt,
});

/** The last USAGE_DAYS days (UTC, today last) with each day's counts, and each key's over them. */
async function usageByDayAndKey(
  store: MetadataStore,
  userId: string,
  now = Date.now(),
): Promise<{ days: DashboardUsageDay[]; per_key: DashboardKeyUsage[] }> {
  const days: DashboardUsageDay[] = Array.from({ length: USAGE_DAYS }, (_, i) => ({
    day: new Date(now - (USAGE_DAYS - 1 - i) * DAY_MS).toISOString().slice(0, 10),
    searches: 0,
    uploads: 0,
  }));
  const byDay = new Map(days.map((d) => [d.day, d]));
  const [activity, keys] = await Promise.all([
    store.dailyActivity(userId, days[0]!.day),
    store.listKeys(userId),
  ]);
  const byKey = new Map<string | null, DashboardKeyUsage>();
  const keyById = new Map(keys.map((k) => [k.id, k]));
  for (const row of activity) {
    const day = byDay.get(row.day);
    if (!day) continue; // a clock that moved back: counted again when it is that day
    day.searches += row.searches;
    day.uploads += row.uploads;
    const known = row.keyId === null ? null : keyById.get(row.keyId);
    if (known === undefined) continue;
    const entry = byKey.get(row.keyId) ?? { key: known && keyView(known), searches: 0, uploads: 0 };
    entry.searches += row.searches;
    entry.uploads += row.uploads;
    byKey.set(row.keyId, entry);
  }
  const per_key = [...byKey.values()].sort((a, b) => b.searches + b.uploads - (a.searches + a.uploads));
  return { days, per_key };
}

function field(body: unknown, name: string, max = 320): string {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  if (typeof value !== "string" || value.length === 0) {
    throw Errors.fieldRequired(name);
  }
  if (value.length > max) throw new LocusError("bad_request", `The field "${name}" is too long.`);
  return value;
}

function emailOf(body: unknown): string {
  const email = field(body, "email").trim().toLowerCase();
  if (!EMAIL.test(email)) throw new LocusError("bad_request", "That is not an email address.");
  return email;
}

/**
 * The web dashboard: its page and assets under /dashboard, and the account endpoints the page calls
 * under /dashboard/api (sign-up, sign-in, sign-out, keys, usage). Files and search go through the
 * public /api endpoints, which take the session cookie with its CSRF token as well as a key.
 */
export function dashboardRouter(deps: DashboardDeps): Router {
  const router = Router();
  const limiter = new SignInLimiter(DEFAULT_SIGNIN_LIMITS, {
    counters: deps.limiterCounters,
    name: "signin",
  });
  // Every sign-up counts, made or refused: a script creating accounts is slowed down either way.
  const signUps = new SignInLimiter(
    { ...DEFAULT_SIGNUP_LIMITS, perAddress: deps.signUpsPerHour ?? DEFAULT_SIGNUP_LIMITS.perAddress },
    { what: "Too many sign-ups from this address", counters: deps.limiterCounters, name: "signup" },
  );
  const passwords = new PasswordWork(deps.passwordWork);
  const parseJson = express.json({ limit: "16kb" });
  // A body that is not JSON, or too large, is the client's mistake: say so (400/413), not 500.
  const json = (req: Request, res: Response, next: (err?: unknown) => void) =>
    parseJson(req, res, (err?: unknown) => {
      const type = (err as { type?: unknown } | undefined)?.type;
      if (type === "entity.too.large")
        next(new LocusError("payload_too_large", "The request body is too large."));
      else if (err) next(new LocusError("bad_request", "The request body must be a JSON object."));
      else next();
    });

  const csp = contentSecurityPolicy(deps.previewOrigin);
  router.get(["/dashboard", "/dashboard/"], (_req, res) => {
    res.setHeader("Content-Security-Policy", csp);
    res.setHeader("Cache-Control", "no-store");
    res.setHeader("X-Frame-Options", "DENY");
    res.setHeader("Referrer-Policy", "same-origin");
    res.sendFile(join(PUBLIC_DIR, "index.html"));
  });
  router.get("/dashboard/assets/:file", listedFiles(PUBLIC_DIR, ASSETS, "5m"));
  // Browsers ask every origin for /favicon.ico (the API's /docs page, preview links): Locus's mark.
  router.get("/favicon.ico", (_req, res) => {
    res.sendFile(join(PUBLIC_DIR, "favicon.ico"), {
      maxAge: "1d",
      headers: { "Content-Type": "image/x-icon" },
    });
  });
  router.get("/dashboard/assets/js/:file", listedFiles(join(PUBLIC_DIR, "js"), MODULES, "5m"));
  router.get("/dashboard/vendor/pdfjs/:file", listedFiles(PDFJS_DIR, PDFJS, "1d"));

  const signedIn = async (req: Request) => (await deps.sessions.authenticate(req)).user;
  const notices = deps.notices ?? (() => Promise.resolve([]));

  router.get("/dashboard/api/session", async (req, res) => {
    const current = await deps.sessions.current(req);
    if (!current) throw new LocusError("unauthorized", "Not signed in.");
    res.setHeader("Cache-Control", "no-store");
    res.json({
      user: { email: current.user.email, plan: current.user.plan },
      csrf: current.csrf,
      notices: await notices(),
    } satisfies DashboardSession);
  });

  router.post("/dashboard/api/signup", json, async (req, res) => {
    const email = emailOf(req.body);
    const password = field(req.body, "password", 1000);
    const address = clientAddress(req);
    await signUps.attempt(email, address);
    const problem = passwordProblem(password, email);
    if (problem) throw new LocusError("bad_request", problem);
    if (await deps.store.findUserByEmail(email)) {
      throw Errors.accountExists();
    }
    let user;
    try {
      user = await deps.store.createUser({ email, plan: "free" });
    } catch (err) {
      // Two sign-ups for one address at once: the store's unique email decides.
      if (await deps.store.findUserByEmail(email)) {
        throw Errors.accountExists();
      }
      throw err;
    }
    await deps.store.setPasswordHash(user.id, await passwords.run(() => hashPassword(password)));
    const session = await deps.sessions.start(res, user);
    deps.logger.info({ userId: user.id }, "dashboard sign-up");
    res.status(201).json({
      user: { email: user.email, plan: user.plan },
      csrf: session.csrf,
      notices: await notices(),
    } satisfies DashboardSession);
  });

  router.post("/dashboard/api/signin", json, async (req, res) => {
    const email = emailOf(req.body);
    const password = field(req.body, "password", 1000);
    const address = clientAddress(req);
    // Counted before the password is checked, so guesses sent all at once are counted too.
    await limiter.attempt(email, address);
    const found = await deps.store.findCredentials(email);
    // The same work whether or not the account exists: no timing hint about which emails do.
    const stored = found?.passwordHash ?? (await dummyHash());
    const ok = await passwords.run(() => verifyPassword(password, stored));
    if (!found || !found.passwordHash || !ok) {
      deps.logger.warn({ address }, "dashboard sign-in refused");
      throw new LocusError("unauthorized", "Wrong email or password.");
    }
    await limiter.succeeded(email, address);
    const session = await deps.sessions.start(res, found.user);
    res.json({
      user: { email: found.user.email, plan: found.user.plan },
      csrf: session.csrf,
      notices: await notices(),
    } satisfies DashboardSession);
  });

  router.post("/dashboard/api/signout", async (req, res) => {
    // Signing out needs no CSRF token: the worst another site could do is sign the user out.
    await deps.sessions.end(req, res);
    res.json({ message: "Signed out" });
  });

  router.get("/dashboard/api/keys", async (req, res) => {
    const user = await signedIn(req);
    res.json((await deps.store.listKeys(user.id)).map(keyView));
  });

  router.post("/dashboard/api/keys", json, async (req, res) => {
    const user = await signedIn(req);
    const name = field(req.body, "name", 100).trim();
    if (name.length === 0) throw Errors.fieldRequired("name");
    const type = (req.body as { type?: unknown }).type;
    if (type !== "live" && type !== "test") {
      throw new LocusError("bad_request", 'The field "type" must be "live" or "test".');
    }
    const active = (await deps.store.listKeys(user.id)).filter((k) => !k.revokedAt).length;
    if (active >= MAX_ACTIVE_KEYS) {
      throw new LocusError("bad_request", `At most ${MAX_ACTIVE_KEYS} active keys: revoke one first.`);
    }
    const generated = generateApiKey(type);
    const key = await deps.store.createKey({
      userId: user.id,
      name,
      type,
      displayPrefix: generated.displayPrefix,
      hash: generated.hash,
    });
    deps.logger.info({ userId: user.id, keyId: key.id, type }, "dashboard key created");
    // The only time the whole key leaves the server.
    res.setHeader("Cache-Control", "no-store");
    res.status(201).json({ ...keyView(key), key: generated.key } satisfies NewDashboardKey);
  });

  router.delete("/dashboard/api/keys/:id", async (req, res) => {
    const user = await signedIn(req);
    const revoked = await deps.store.revokeKey({ id: String(req.params.id), userId: user.id });
    if (!revoked) throw new LocusError("not_found", "No active key with this id.");
    deps.logger.info({ userId: user.id, keyId: revoked.id }, "dashboard key revoked");
    res.json(keyView(revoked));
  });

  router.patch("/dashboard/api/keys/:id", json, async (req, res) => {
    const user = await signedIn(req);
    const name = field(req.body, "name", 100).trim();
    if (name.length === 0) throw Errors.fieldRequired("name");
    const renamed = await deps.store.renameKey({ id: String(req.params.id), userId: user.id, name });
    if (!renamed) throw new LocusError("not_found", "No key with this id.");
    deps.logger.info({ userId: user.id, keyId: renamed.id }, "dashboard key renamed");
    res.json(keyView(renamed));
  });

  router.get("/dashboard/api/usage", async (req, res) => {
    const user = await signedIn(req);
    const month = new Date().toISOString().slice(0, 7);
    res.json({
      plan: user.plan,
      rate_limit_per_second: deps.rateLimits[user.plan],
      monthly_upload_quota: deps.monthlyUploadQuota[user.plan],
      uploads_this_month: await deps.store.uploadsThisMonth(user.id, month),
      month,
      max_upload_bytes: deps.maxUploadBytes,
      ...(await usageByDayAndKey(deps.store, user.id)),
    } satisfies DashboardUsage);
  });

  router.all("/dashboard/api/{*rest}", () => {
    throw new LocusError("not_found", "Not Found");
  });

  return router;
}
