/**
 * When a failed delivery is tried again: after failed attempt number `attempt` (1 for the first),
 * wait `scheduleMs[attempt - 1]`; after the last wait's attempt fails, the delivery is given up.
 * The default schedule (LOCUS_WEBHOOK_RETRY_SCHEDULE_S) is Standard Webhooks' (Svix's): 5 s, 5 min,
 * 30 min, 2 h, 5 h, 10 h, 10 h, eight attempts over about 27 hours.
 */
export class RetrySchedule {
  constructor(private readonly scheduleMs: readonly number[]) {
    if (scheduleMs.length === 0) throw new Error("a retry schedule needs at least one wait");
  }

  /** Attempts a delivery gets: the first, and one after each wait. */
  get maxAttempts(): number {
    return this.scheduleMs.length + 1;
  }

  /**
   * When the next attempt is due after failed attempt number `attempt` of `maxAttempts`, or null
   * when none is left. The wait is spread by up to a tenth either way, so deliveries that failed
   * together (a receiver that was down) do not all come back in the same second.
   */
  nextAttemptAt(
    attempt: number,
    maxAttempts: number,
    now: Date,
    random: () => number = Math.random,
  ): Date | null {
    if (attempt >= maxAttempts) return null;
    const wait = this.scheduleMs[Math.min(attempt, this.scheduleMs.length) - 1] ?? 0;
    const jitter = wait * 0.1 * (2 * random() - 1);
    return new Date(now.getTime() + Math.max(0, Math.round(wait + jitter)));
  }

  /** The total of every wait, for the README and the tests. */
  get spanMs(): number {
    return this.scheduleMs.reduce((a, b) => a + b, 0);
  }
}
