import type { NextFunction, Request, Response } from "express";
import { Errors } from "@locus/contracts";
import type { ApiKey, ApiKeyStore, User } from "@locus/metadata-store";
import type { KeyLookup } from "./key-lookup-cache.ts";
import type { Logger } from "@locus/runtime";
import { hashApiKey, keyTypeOf } from "@locus/metadata-store";

export interface Principal {
  user: User;
  /** The API key used, or null for a signed-in dashboard page (which acts as the live account). */
  key: ApiKey | null;
  /** The dashboard session of a signed-in page; null for a key. */
  sessionId: string | null;
  sandbox: boolean;
}

/**
 * Dashboard sessions, as the gateway sees them: a page signed in to the dashboard calls the same
 * API with its session cookie and CSRF token instead of a key (see @locus/dashboard).
 */
export interface SessionAuthenticator {
  /** True when the request carries a session cookie (live or not). */
  hasCookie(req: Request): boolean;
  /** The session and its user; 401 when the session has ended, 403 without its CSRF token. */
  authenticate(req: Request): Promise<{ user: User; sessionId: string }>;
}

const TOUCH_INTERVAL_MS = 60_000;

const challenge = (error?: string) => ({
  "WWW-Authenticate": error ? `Bearer realm="locus", error="${error}"` : 'Bearer realm="locus"',
});

export function principalOf(res: Response): Principal {
  const principal = res.locals.principal as Principal | undefined;
  if (!principal) throw new Error("route is missing the authenticate middleware");
  return principal;
}

/**
 * Bearer-key authentication. The key is looked up by its hash (through `keys`, which may keep
 * lookups while it hears of every change: see KeyLookupCache), so a revoked key is refused from
 * the next request after the revocation, by every process sharing the store. The key itself is never
 * logged or echoed. Without an Authorization header, a dashboard session cookie (with its CSRF
 * token) is accepted instead, when the gateway serves the dashboard.
 */
/** Why a key was refused, for whoever counts: none given, not a Locus key, or not an active one. */
export type KeyRefusal = "missing" | "malformed" | "unknown";

export function authenticate(
  keys: KeyLookup,
  store: Pick<ApiKeyStore, "touchKey">,
  logger: Logger,
  sessions?: SessionAuthenticator,
  keyRefused: (reason: KeyRefusal) => void = () => undefined,
) {
  const lastTouched = new Map<string, number>();

  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const header = req.headers.authorization;
    if ((header === undefined || header.trim() === "") && sessions?.hasCookie(req)) {
      const { user, sessionId } = await sessions.authenticate(req);
      res.locals.principal = { user, key: null, sessionId, sandbox: false } satisfies Principal;
      next();
      return;
    }
    if (header === undefined || header.trim() === "") {
      keyRefused("missing");
      throw Errors.missingApiKey(challenge());
    }
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    const key = m?.[1];
    const type = key === undefined ? null : keyTypeOf(key);
    if (key === undefined || type === null) {
      keyRefused("malformed");
      throw Errors.malformedAuthorization(challenge("invalid_request"));
    }
    const found = await keys.findActiveKeyByHash(hashApiKey(key));
    if (!found || found.key.type !== type) {
      keyRefused("unknown");
      throw Errors.invalidApiKey(challenge("invalid_token"));
    }
    res.locals.principal = {
      user: found.user,
      key: found.key,
      sessionId: null,
      sandbox: type === "test",
    } satisfies Principal;

    // Record "last used" at most once a minute per key: a write per request would cost more than it tells.
    const now = Date.now();
    if (now - (lastTouched.get(found.key.id) ?? 0) > TOUCH_INTERVAL_MS) {
      lastTouched.set(found.key.id, now);
      store.touchKey(found.key.id, new Date(now).toISOString()).catch((err: unknown) => {
        logger.warn({ err, keyId: found.key.id }, "could not record key use");
      });
    }
    next();
  };
}
