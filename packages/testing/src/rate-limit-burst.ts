/** A burst of requests sent at once, and what a fixed-window rate limit could let through meanwhile. */
export interface Burst {
  responses: Response[];
  /** From the first request sent to the last answer, in ms. */
  elapsedMs: number;
  /** How many were answered 200. */
  allowed: number;
  /**
   * How many windows the limiter could have opened while the burst lasted. Locus counts with
   * rate-limiter-flexible's fixed windows: a window opens at an account's first request after the
   * last one closed and lasts windowMs, so at most floor(elapsed / windowMs) + 1 of them begin
   * within the burst, and at most limit × windows requests may pass.
   */
  windows: number;
}

/**
 * Bursts of `requests` at once, each from a new account (`send` makes one and returns how to send
 * its i-th request), until one burst fits in a single window or `attempts` are spent. A burst that
 * spans two windows cannot tell a shared count from counts kept per replica, nor a limit of 5
 * from one of 10; a burst within one window can, so the caller asks that one of them fit.
 */
export async function rateLimitBursts(
  send: () => Promise<(i: number) => Promise<Response>>,
  { requests = 12, attempts = 3, windowMs = 1000, now = () => performance.now() } = {},
): Promise<Burst[]> {
  const bursts: Burst[] = [];
  for (let attempt = 0; attempt < attempts; attempt++) {
    const request = await send();
    const started = now();
    const responses = await Promise.all(Array.from({ length: requests }, (_, i) => request(i)));
    const elapsedMs = now() - started;
    const burst = {
      responses,
      elapsedMs,
      allowed: responses.filter((r) => r.status === 200).length,
      windows: Math.floor(elapsedMs / windowMs) + 1,
    };
    bursts.push(burst);
    if (burst.windows === 1) break;
  }
  return bursts;
}
