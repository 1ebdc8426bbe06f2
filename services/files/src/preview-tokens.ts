import { jwtVerify, SignJWT, errors as joseErrors } from "jose";
import { PREVIEW_TTL_SECONDS } from "@locus/contracts";

// The link's lifetime is part of the API (`expires_in`), so its number lives with the API's schemas.
export { PREVIEW_TTL_SECONDS };

/**
 * What a preview link was asked with: an API key, or a signed-in dashboard session. The link works
 * only while that key or session does, so revoking a key (or signing out) ends its links too.
 */
export type PreviewGrant = { keyId: string } | { sessionId: string };

export interface PreviewClaims {
  fileId: string;
  userId: string;
  grant: PreviewGrant;
  /** The link shows the original bytes even where a PDF rendition exists (an office document). */
  original?: boolean | undefined;
}

/**
 * Preview links carry a short-lived HS256 token naming the file and its owner. The token is all
 * the link needs: no API key travels in a URL.
 */
export class PreviewTokens {
  private readonly key: Uint8Array;

  constructor(secret: string) {
    this.key = new TextEncoder().encode(secret);
  }

  async sign(claims: PreviewClaims, now = new Date()): Promise<{ token: string; expiresAt: Date }> {
    const issuedAt = Math.floor(now.getTime() / 1000);
    const expiresAt = new Date((issuedAt + PREVIEW_TTL_SECONDS) * 1000);
    const grant = "keyId" in claims.grant ? { kid: claims.grant.keyId } : { sid: claims.grant.sessionId };
    const token = await new SignJWT({
      uid: claims.userId,
      ...grant,
      ...(claims.original ? { org: true } : {}),
    })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject(claims.fileId)
      .setAudience("locus:preview")
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + PREVIEW_TTL_SECONDS)
      .sign(this.key);
    return { token, expiresAt };
  }

  /** The claims of a valid token; null for a tampered, expired or foreign one. */
  async verify(token: string): Promise<PreviewClaims | null> {
    try {
      const { payload } = await jwtVerify(token, this.key, {
        algorithms: ["HS256"],
        audience: "locus:preview",
      });
      if (typeof payload.sub !== "string" || typeof payload.uid !== "string") return null;
      // A link names the key or session it was asked with (links without one are refused).
      const grant: PreviewGrant | null =
        typeof payload.kid === "string"
          ? { keyId: payload.kid }
          : typeof payload.sid === "string"
            ? { sessionId: payload.sid }
            : null;
      if (!grant) return null;
      return {
        fileId: payload.sub,
        userId: payload.uid,
        grant,
        ...(payload.org === true ? { original: true } : {}),
      };
    } catch (err) {
      if (err instanceof joseErrors.JOSEError) return null;
      throw err;
    }
  }
}
