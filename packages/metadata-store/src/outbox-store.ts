/**
 * A bus message recorded in the same transaction as the change that calls for it (the
 * transactional outbox), so that a change once stored is announced even if the process dies before
 * it publishes: a relay hands each entry to the bus, and removes it once the bus has it.
 */
export interface OutboxEntry {
  id: string;
  /** The bus topic, and the message as that topic's schema takes it. */
  topic: string;
  message: unknown;
  /** The file it is about: the entry is removed with the file's record. */
  fileId: string | null;
  /**
   * When a relay may publish it: later than its creation while it is held (an upload whose
   * request is not complete yet), and after each claim by a relay for the claim's lease.
   */
  availableAt: string;
  /** Times a relay claimed it: 0 while it waits for its first publication. */
  attempts: number;
  createdAt: string;
}

export type NewOutboxEntry = Omit<OutboxEntry, "attempts" | "createdAt">;

export interface OutboxStore {
  /**
   * Claims the file's entries that nobody has claimed yet (an upload's request completed: its
   * files process publishes them itself, at once), as claimDueOutboxEntries does, whether they are
   * due or held. None when they are claimed or published already, or the file is gone.
   */
  claimFileOutbox(fileId: string, leaseUntil: string): Promise<OutboxEntry[]>;
  /**
   * Claims up to `limit` entries due at `now`, oldest first: each one's availableAt moves to
   * `leaseUntil` in a compare-and-set on what was read, so of relays that read the same entry one
   * claims it, and it is due again then if its publication fails or its relay dies.
   */
  claimDueOutboxEntries(now: string, leaseUntil: string, limit: number): Promise<OutboxEntry[]>;
  /** The entry is published: removed. */
  deleteOutboxEntry(id: string): Promise<void>;
  /** How many entries wait (held, due or claimed), for status and metrics. */
  countOutboxEntries(): Promise<number>;
}
