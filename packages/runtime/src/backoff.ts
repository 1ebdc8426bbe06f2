export interface BackoffOptions {
  /** Delay after the first failed attempt, in ms. */
  baseMs: number;
  /** Longest delay, in ms: doubling stops here. */
  maxMs: number;
  /**
   * Spread the delay uniformly between half and all of it ("equal jitter"), so many processes
   * failing at once (a fleet reconnecting to a broker that came back) do not retry in lockstep.
   * Without it the delay is exactly the doubled one (default).
   */
  jitter?: boolean;
}

/**
 * How long to wait after failed attempt number `attempt` (1 for the first) before the next:
 * `baseMs`, doubling with each further attempt, capped at `maxMs`; with `jitter`, a uniformly
 * random point in the upper half of that. In whole milliseconds (a message TTL must be an integer).
 * The one back-off formula of the bus's retries and reconnections and of the search index's bulk
 * retries; each keeps its own base and cap.
 */
export function backoffDelay(attempt: number, options: BackoffOptions): number {
  const ceiling = Math.min(options.baseMs * 2 ** (attempt - 1), options.maxMs);
  return Math.round(options.jitter ? ceiling / 2 + (Math.random() * ceiling) / 2 : ceiling);
}
