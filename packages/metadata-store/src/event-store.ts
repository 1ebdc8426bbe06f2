import type { EventQuery, FileEventType } from "@locus/contracts";

/** One file event of an account, as the event log keeps it. */
export interface StoredEvent {
  /** The event's id: the `webhook-id` of its deliveries. */
  id: string;
  userId: string;
  type: FileEventType;
  /** When the change was recorded (ISO 8601, UTC). */
  occurredAt: string;
  /** The body its webhook deliveries carry (`{type, timestamp, data: {file}}`), as JSON text. */
  payload: string;
}

/** A page of the log, newest first. */
export interface EventPage {
  events: StoredEvent[];
  /** Give as the query's `cursor` for the next page; null on the last. */
  nextCursor: string | null;
}

/**
 * The event log: every file event of every account, kept for the retention period whether or not
 * anyone was told of it, so a consumer can catch up on what its webhooks missed. Reads are scoped
 * by user id: one account never sees another's events.
 */
export interface EventStore {
  /**
   * Keeps an event. Idempotent by id: a redelivered event changes nothing (false), as does an
   * event of a user who no longer exists (their account went, with its log).
   */
  recordEvent(event: StoredEvent): Promise<boolean>;
  /** The user's events that match the query, newest first. A cursor that is not one reads as page 1's end: no events. */
  listEvents(userId: string, query: EventQuery): Promise<EventPage>;
  getEvent(userId: string, eventId: string): Promise<StoredEvent | null>;
  /** Removes up to `limit` events (of any account) that occurred before `before`; how many went. */
  pruneEvents(before: string, limit: number): Promise<number>;
}
