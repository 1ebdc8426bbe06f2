import type { NextFunction, Request, Response } from "express";
import { errors as joseErrors, jwtVerify, SignJWT } from "jose";
import { LocusError } from "@locus/contracts";

const TTL_SECONDS = 60;

/**
 * Who is calling, between Locus services: the gateway authenticates the API key, then calls files
 * and search with a short-lived token (HS256, shared secret) naming the user and the service it is
 * meant for. Those services accept nothing else, so an internal port reached from outside is
 * still closed to anyone without the secret.
 */
export class ServiceIdentity {
  private readonly key: Uint8Array;

  constructor(secret: string) {
    this.key = new TextEncoder().encode(secret);
  }

  /** A token for one call to `audience` (e.g. "files") on behalf of `userId`. */
  sign(userId: string, audience: string): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({})
      .setProtectedHeader({ alg: "HS256" })
      .setSubject(userId)
      .setAudience(`locus:${audience}`)
      .setIssuer("locus:gateway")
      .setIssuedAt(now)
      .setExpirationTime(now + TTL_SECONDS)
      .sign(this.key);
  }

  /** Middleware: refuses a request without a valid token for `audience`; sets res.locals.userId. */
  require(audience: string) {
    return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
      const token = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "")?.[1];
      if (!token)
        throw new LocusError("unauthorized", "This is an internal endpoint: a service token is required.");
      try {
        const { payload } = await jwtVerify(token, this.key, {
          algorithms: ["HS256"],
          audience: `locus:${audience}`,
          issuer: "locus:gateway",
        });
        if (typeof payload.sub !== "string") throw new Error("token has no subject");
        res.locals.userId = payload.sub;
      } catch (err) {
        if (err instanceof joseErrors.JOSEError || err instanceof Error) {
          throw new LocusError("unauthorized", "The service token is invalid or has expired.");
        }
        throw err;
      }
      next();
    };
  }
}

export function callerOf(res: Response): string {
  const userId = res.locals.userId as string | undefined;
  if (!userId) throw new Error("route is missing the service identity middleware");
  return userId;
}
