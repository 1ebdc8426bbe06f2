import { jwtVerify, SignJWT, errors as joseErrors } from "jose";

export const PREVIEW_TTL_SECONDS = 3600;

export interface PreviewClaims {
  fileId: string;
  userId: string;
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
    const token = await new SignJWT({ uid: claims.userId })
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
      return { fileId: payload.sub, userId: payload.uid };
    } catch (err) {
      if (err instanceof joseErrors.JOSEError) return null;
      throw err;
    }
  }
}
