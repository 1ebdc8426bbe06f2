import { randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { parse as parseCookies } from "cookie";
import type { Request, Response } from "express";
import { jwtVerify, SignJWT } from "jose";
import { LocusError } from "@locus/contracts";
import type { SessionStore, User } from "@locus/metadata-store";

export const SESSION_COOKIE = "locus_session";
/** The header a signed-in page sends with every API call: the session's CSRF token. */
export const CSRF_HEADER = "x-csrf-token";
const ISSUER = "locus-dashboard";

export interface SessionOptions {
  /** How long a session lasts after signing in (default 7 days). */
  ttlMs?: number;
  /**
   * Send the cookie over HTTPS only: on when the public URL is https; also set for a request that
   * came over HTTPS (directly, or through a trusted proxy that says so in X-Forwarded-Proto).
   */
  secureCookie: boolean;
}

export interface SignedIn {
  user: User;
  sessionId: string;
  csrf: string;
}

/**
 * Dashboard sessions. The cookie holds a JWT (HS256, jose) naming the session, its user and its
 * CSRF token; it is httpOnly (no script reads it), SameSite=Strict (no other site sends it) and
 * Secure behind https. The session itself lives in the store: signing out revokes it there, so a
 * copied cookie stops working at once, in every gateway.
 *
 * CSRF: a page learns the session's token from GET /dashboard/api/session (readable only by the
 * page's own origin) and sends it as X-CSRF-Token with every call; a request that rides on the
 * cookie alone is refused. SameSite=Strict already keeps other sites from sending the cookie;
 * the token covers browsers that do not honour it.
 */
export class DashboardSessions {
  private readonly ttlMs: number;

  constructor(
    private readonly store: SessionStore,
    private readonly secret: Uint8Array,
    private readonly options: SessionOptions,
  ) {
    this.ttlMs = options.ttlMs ?? 7 * 24 * 3600_000;
  }

  /** Starts a session for the user and sets its cookie. */
  async start(res: Response, user: User): Promise<SignedIn> {
    const now = Date.now();
    const session = await this.store.createSession({
      id: randomUUID(),
      userId: user.id,
      createdAt: new Date(now).toISOString(),
      expiresAt: new Date(now + this.ttlMs).toISOString(),
    });
    const csrf = randomBytes(24).toString("base64url");
    const token = await new SignJWT({ csrf })
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer(ISSUER)
      .setSubject(user.id)
      .setJti(session.id)
      .setIssuedAt(Math.floor(now / 1000))
      .setExpirationTime(Math.floor((now + this.ttlMs) / 1000))
      .sign(this.secret);
    res.cookie(SESSION_COOKIE, token, {
      httpOnly: true,
      sameSite: "strict",
      secure: this.options.secureCookie || res.req.secure,
      path: "/",
      maxAge: this.ttlMs,
    });
    return { user, sessionId: session.id, csrf };
  }

  /**
   * The signed-in user of this request's cookie, or null when there is no cookie or it is not a
   * live session (forged, expired, signed out).
   */
  async current(req: Request): Promise<SignedIn | null> {
    const token = parseCookies(req.headers.cookie ?? "")[SESSION_COOKIE];
    if (!token) return null;
    let claims: { sub?: string; jti?: string; csrf?: unknown };
    try {
      ({ payload: claims } = await jwtVerify(token, this.secret, { issuer: ISSUER, algorithms: ["HS256"] }));
    } catch {
      return null;
    }
    if (!claims.jti || typeof claims.csrf !== "string") return null;
    const found = await this.store.findActiveSession(claims.jti, new Date().toISOString());
    if (!found || found.user.id !== claims.sub) return null;
    return { user: found.user, sessionId: found.session.id, csrf: claims.csrf };
  }

  /**
   * For API calls made by a signed-in page: the user when the cookie is a live session and the
   * request carries its CSRF token; 401 without a session, 403 without the token.
   */
  async authenticate(req: Request): Promise<SignedIn> {
    const signedIn = await this.current(req);
    if (!signedIn) {
      throw new LocusError("unauthorized", "Your dashboard session has ended: sign in again.");
    }
    const sent = req.get(CSRF_HEADER) ?? "";
    const expected = Buffer.from(signedIn.csrf);
    const given = Buffer.from(sent);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new LocusError("forbidden", "Missing or wrong X-CSRF-Token header for this session.");
    }
    return signedIn;
  }

  /** True when the request carries a session cookie at all (live or not). */
  hasCookie(req: Request): boolean {
    return Boolean(parseCookies(req.headers.cookie ?? "")[SESSION_COOKIE]);
  }

  async end(req: Request, res: Response): Promise<void> {
    const signedIn = await this.current(req);
    if (signedIn) await this.store.revokeSession(signedIn.sessionId, new Date().toISOString());
    res.clearCookie(SESSION_COOKIE, {
      httpOnly: true,
      sameSite: "strict",
      secure: this.options.secureCookie || res.req.secure,
      path: "/",
    });
  }
}
