import { ErrorCodes, LocusError, type ErrorCode } from "@locus/contracts";
import { currentRequestId } from "./request-context.ts";
import type { ServiceIdentity } from "./service-identity.ts";

/** Response headers worth passing on to the public client when a service refuses. */
const FORWARDED_HEADERS = ["retry-after", "www-authenticate"];

/**
 * Calls another Locus service as the given user. A refusal comes back as the same LocusError the
 * service threw (code, message, Retry-After), so the gateway answers exactly as in one process;
 * a service that cannot be reached is a 503.
 */
export class ServiceClient {
  constructor(
    private readonly baseUrl: string,
    private readonly audience: string,
    private readonly identity: ServiceIdentity,
    private readonly timeoutMs = 30_000,
  ) {}

  async request(
    userId: string,
    path: string,
    init: RequestInit & { timeoutMs?: number } = {},
  ): Promise<Response> {
    const url = new URL(`${this.baseUrl}${path}`);
    // The token is good for this one request: its method, path and query, as the callee sees them.
    const token = await this.identity.sign(userId, this.audience, {
      method: init.method ?? "GET",
      path: `${url.pathname}${url.search}`,
    });
    const requestId = currentRequestId();
    let res: Response;
    try {
      res = await fetch(url, {
        ...init,
        headers: {
          ...(init.headers as Record<string, string> | undefined),
          Authorization: `Bearer ${token}`,
          // The same id in the callee's logs as in the gateway's.
          ...(requestId ? { "X-Request-Id": requestId } : {}),
        },
        signal: init.signal ?? AbortSignal.timeout(init.timeoutMs ?? this.timeoutMs),
      });
    } catch (err) {
      throw new LocusError("unavailable", `The ${this.audience} service is unavailable; try again shortly.`, {
        cause: err,
        headers: { "Retry-After": "1" },
      });
    }
    if (res.ok) return res;
    const code = res.headers.get("x-locus-error-code");
    const body = (await res.json().catch(() => null)) as { detail?: unknown } | null;
    const message = typeof body?.detail === "string" ? body.detail : `The ${this.audience} service failed.`;
    const headers: Record<string, string> = {};
    for (const name of FORWARDED_HEADERS) {
      const value = res.headers.get(name);
      if (value) headers[name] = value;
    }
    if (code && code in ErrorCodes) throw new LocusError(code as ErrorCode, message, { headers });
    throw new LocusError(res.status >= 500 ? "unavailable" : "internal", message, { headers });
  }

  async json<T>(userId: string, path: string, init: RequestInit = {}): Promise<T> {
    const res = await this.request(userId, path, init);
    return (await res.json()) as T;
  }
}
