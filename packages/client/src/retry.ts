/** How a client treats 429 (Too Many Requests) answers. */
export interface RetryPolicy {
  /** Retries of one request after a 429 before its 429 is returned (so thrown by the helpers). */
  maxRetries: number;
  /**
   * The longest wait worth making. A 429 asking for longer (a monthly upload quota that renews in
   * days) is returned at once instead of holding the caller, with its Retry-After on the error.
   */
  maxRetryDelayMs: number;
  /** Called before each wait: for logs, metrics or tests. */
  onRetry?: (event: { attempt: number; waitMs: number; response: Response }) => void;
}

export const DEFAULT_MAX_RETRIES = 3;
export const DEFAULT_MAX_RETRY_DELAY_MS = 60_000;

/**
 * Milliseconds a Retry-After header asks to wait (RFC 9110: delay-seconds, or an HTTP date), null
 * when there is none or it cannot be read. A date in the past means no wait.
 */
export function retryAfterMs(header: string | null, now = Date.now()): number | null {
  if (header === null) return null;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  // Every HTTP date form has a time of day (Date.parse alone takes "-1" for a year).
  if (!/\d\d:\d\d:\d\d/.test(value)) return null;
  // HTTP dates are in GMT; the obsolete asctime form names no zone, and would be read as local time.
  const time = Date.parse(/(GMT|UTC|[+-]\d{4})$/i.test(value) ? value : `${value} GMT`);
  return Number.isNaN(time) ? null : Math.max(0, time - now);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Sends a request, and again after each 429 once the wait its Retry-After asks for has passed
 * (1 s, 2 s, 4 s… when it names none), up to `maxRetries` times. `send` makes a fresh request
 * each time, since a request's body can be read only once.
 */
export async function sendWithRetry(send: () => Promise<Response>, policy: RetryPolicy): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    const response = await send();
    if (response.status !== 429 || attempt > policy.maxRetries) return response;
    const waitMs = retryAfterMs(response.headers.get("Retry-After")) ?? 1000 * 2 ** (attempt - 1);
    if (waitMs > policy.maxRetryDelayMs) return response;
    // Read the refusal to its end, so that its connection can carry the next request.
    await response.arrayBuffer().catch(() => undefined);
    policy.onRetry?.({ attempt, waitMs, response });
    await sleep(waitMs);
  }
}
