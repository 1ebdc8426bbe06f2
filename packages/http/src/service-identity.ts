import { randomUUID, webcrypto } from "node:crypto";
import type { NextFunction, Request, Response } from "express";
import { errors as joseErrors, jwtVerify, SignJWT } from "jose";
import { Errors } from "@locus/contracts";

/** Long enough for a call to reach its service across a busy cluster; too short to be worth stealing. */
const TTL_SECONDS = 30;
/** Clocks of different hosts disagree a little. */
const CLOCK_TOLERANCE_SECONDS = 5;
const ISSUER = "locus:gateway";

/** The one request a service token is good for. */
export interface ServiceCall {
  method: string;
  /** Path and query, as the callee receives them: "/internal/files/…?limit=10". */
  path: string;
}

/**
 * Remembers the ids of tokens already used until they expire, so that a token seen on the wire (a
 * log, a proxy, a capture inside the cluster) cannot be played again. Tokens arrive in about the
 * order they expire, so the oldest entries are dropped first.
 */
class UsedTokens {
  private readonly seen = new Map<string, number>();

  /** False when the id was used before. */
  use(id: string, expiresAtMs: number, now = Date.now()): boolean {
    for (const [seenId, expires] of this.seen) {
      if (expires > now) break;
      this.seen.delete(seenId);
    }
    if (this.seen.has(id)) return false;
    this.seen.set(id, expiresAtMs + CLOCK_TOLERANCE_SECONDS * 1000);
    return true;
  }
}

/**
 * Who is calling, between Locus services: the gateway authenticates the API key, then calls files
 * and search with a token (HS256, shared secret) naming the user, the service it is meant for, and
 * the one request it is for (method, path and query, like DPoP's htm/htu). It lives 30 seconds
 * and is accepted once by each process (a replica of the same service could still take it within
 * those seconds: the binding to one request is what keeps that harmless). Those services accept nothing else and take the user from the token
 * only, so an internal port reached from outside is still closed to anyone without the secret,
 * and a token that leaks can neither be replayed nor used for another call.
 */
export class ServiceIdentity {
  /**
   * The secret as a Web Crypto key, imported once: given bytes, jose imports them again for every
   * token signed or checked, work repeated on each call between services.
   */
  private readonly key: Promise<webcrypto.CryptoKey>;
  private readonly used = new UsedTokens();

  constructor(secret: string) {
    this.key = webcrypto.subtle.importKey(
      "raw",
      new TextEncoder().encode(secret),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign", "verify"],
    );
    // Its failure is thrown where the key is used, not as an unhandled rejection here.
    this.key.catch(() => undefined);
  }

  /** A token for one call to `audience` (e.g. "files") on behalf of `userId`. */
  async sign(userId: string, audience: string, call: ServiceCall): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ htm: call.method.toUpperCase(), htu: call.path })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject(userId)
      .setAudience(`locus:${audience}`)
      .setIssuer(ISSUER)
      .setJti(randomUUID())
      .setIssuedAt(now)
      .setExpirationTime(now + TTL_SECONDS)
      .sign(await this.key);
  }

  /** Middleware: refuses a request without a valid token for `audience`; sets res.locals.userId. */
  require(audience: string) {
    return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
      const token = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "")?.[1];
      if (!token) throw Errors.serviceTokenMissing();
      let claims;
      try {
        ({ payload: claims } = await jwtVerify(token, await this.key, {
          algorithms: ["HS256"],
          audience: `locus:${audience}`,
          issuer: ISSUER,
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
          requiredClaims: ["sub", "jti", "exp", "htm", "htu"],
        }));
      } catch (err) {
        if (err instanceof joseErrors.JOSEError) {
          throw Errors.serviceTokenInvalid();
        }
        throw err;
      }
      if (claims.htm !== req.method || claims.htu !== req.originalUrl) {
        throw Errors.serviceTokenForAnotherRequest();
      }
      if (typeof claims.sub !== "string" || typeof claims.jti !== "string") {
        throw Errors.serviceTokenInvalid();
      }
      if (!this.used.use(claims.jti, (claims.exp ?? 0) * 1000)) {
        throw Errors.serviceTokenUsed();
      }
      res.locals.userId = claims.sub;
      next();
    };
  }
}

export function callerOf(res: Response): string {
  const userId = res.locals.userId as string | undefined;
  if (!userId) throw new Error("route is missing the service identity middleware");
  return userId;
}
