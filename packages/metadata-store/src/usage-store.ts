/** What a day's activity counts. */
export type ActivityKind = "search" | "upload";

/** One key's activity on one day (UTC): what the usage page charts and lists per key. */
export interface DailyActivity {
  /** YYYY-MM-DD, UTC. */
  day: string;
  /** The API key that did it; null for a signed-in dashboard page (which acts as the live account). */
  keyId: string | null;
  searches: number;
  uploads: number;
}

/**
 * The usage aggregate: uploads counted per user and month, against the plan's quota; and searches
 * and uploads per day and key, for the account to see (not a limit: the month's count is the quota).
 */
export interface UsageStore {
  /**
   * Takes one upload from this month's quota if any is left (quota 0 = unlimited).
   * Returns false when the quota is used up. Atomic across processes.
   */
  reserveUpload(userId: string, month: string, quota: number): Promise<boolean>;
  /** Gives back an upload reserved for a request that then failed. */
  releaseUpload(userId: string, month: string): Promise<void>;
  uploadsThisMonth(userId: string, month: string): Promise<number>;
  /** Counts one search or upload of a live key (or dashboard page) on `day` (YYYY-MM-DD): one upsert. */
  recordActivity(input: {
    userId: string;
    keyId: string | null;
    day: string;
    kind: ActivityKind;
  }): Promise<void>;
  /** The user's activity per day and key from `since` (YYYY-MM-DD) on, oldest day first. */
  dailyActivity(userId: string, since: string): Promise<DailyActivity[]>;
}
