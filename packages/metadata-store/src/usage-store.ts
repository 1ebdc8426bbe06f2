/** The usage aggregate: uploads counted per user and month, against the plan's quota. */
export interface UsageStore {
  /**
   * Takes one upload from this month's quota if any is left (quota 0 = unlimited).
   * Returns false when the quota is used up. Atomic across processes.
   */
  reserveUpload(userId: string, month: string, quota: number): Promise<boolean>;
  /** Gives back an upload reserved for a request that then failed. */
  releaseUpload(userId: string, month: string): Promise<void>;
  uploadsThisMonth(userId: string, month: string): Promise<number>;
}
