import type { FileEventType } from "@locus/contracts";

/** Where an account's webhooks go, and which file events it wants. */
export interface WebhookEndpoint {
  id: string;
  userId: string;
  url: string;
  description: string;
  /** The events sent to it; never empty. */
  events: FileEventType[];
  /** `whsec_` and the base64 signing key (Standard Webhooks); shown to the owner once. */
  secret: string;
  /**
   * The secret before the last rotation, which signs too until `previousSecretExpiresAt` (a
   * second signature), so a receiver can switch over; null when none.
   */
  previousSecret: string | null;
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
  /** Set while the endpoint is disabled (after persistent failure): when, and why. */
  disabledAt: string | null;
  disabledReason: string | null;
  /** The last time a delivery to it succeeded. */
  lastSuccessAt: string | null;
}

/** What makes an endpoint; the rest (times, state, a rotated-out secret) the store sets. */
export type NewWebhookEndpoint = Pick<
  WebhookEndpoint,
  "id" | "userId" | "url" | "description" | "events" | "secret"
>;

export type DeliveryStatus = "pending" | "succeeded" | "failed";

/** One event to one endpoint: retried until it succeeds or runs out of attempts. */
export interface WebhookDelivery {
  id: string;
  endpointId: string;
  userId: string;
  /** The event's id: the `webhook-id` header, the same on every attempt. */
  eventId: string;
  eventType: FileEventType;
  /** The exact body sent (and signed) on every attempt. */
  payload: string;
  status: DeliveryStatus;
  /** Attempts made so far. */
  attempts: number;
  /** Attempts allowed before the delivery is given up (`failed`). */
  maxAttempts: number;
  /** When the next attempt is due (while `pending`). */
  nextAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
  /** Set when the owner asked for it again: its failure then does not disable the endpoint. */
  redeliveredAt: string | null;
}

/** One HTTP attempt of a delivery, as the delivery log shows it. */
export interface WebhookAttempt {
  id: string;
  deliveryId: string;
  attemptedAt: string;
  /** The receiver's HTTP status; null when no answer came (refused address, timeout, network). */
  statusCode: number | null;
  /** Why the attempt failed, in words; null when it succeeded. */
  error: string | null;
  durationMs: number;
}

/** A delivery leased to one worker, with what it needs to send it. */
export interface ClaimedDelivery {
  delivery: WebhookDelivery;
  endpoint: WebhookEndpoint;
}

export interface WebhookEndpointChange {
  url?: string;
  events?: FileEventType[];
  description?: string;
  /**
   * A new secret: the current one becomes the previous secret, signing too until
   * `previousSecretExpiresAt` (never, when that is absent or not after the change's time).
   */
  secret?: string;
  previousSecretExpiresAt?: string;
  /** true: enable again (clears the disabled time and reason). */
  enable?: boolean;
}

/** What an attempt ended with, and what follows: another attempt at `nextAttemptAt`, or an end. */
export interface AttemptOutcome {
  attempt: Omit<WebhookAttempt, "id" | "deliveryId">;
  status: DeliveryStatus;
  nextAttemptAt: string | null;
}

/** A page of an endpoint's deliveries, newest first, each with its attempts (oldest first). */
export interface DeliveryPage {
  deliveries: (WebhookDelivery & { attemptLog: WebhookAttempt[] })[];
  /** Give as the next page's `cursor`; null on the last. */
  nextCursor: string | null;
}

/**
 * The webhooks aggregate: endpoints per account, the deliveries owed to them, and each attempt.
 * Every read and change that an account makes is scoped by its user id, so one account never sees
 * or touches another's (a foreign id reads as missing). Deliveries are claimed with a lease, so
 * several workers never send the same attempt at once and a crashed worker's deliveries come back.
 */
export interface WebhookStore {
  createWebhookEndpoint(endpoint: NewWebhookEndpoint, at: string): Promise<WebhookEndpoint>;
  listWebhookEndpoints(userId: string): Promise<WebhookEndpoint[]>;
  getWebhookEndpoint(userId: string, endpointId: string): Promise<WebhookEndpoint | null>;
  /** The changed endpoint, or null when the user has no such endpoint. */
  updateWebhookEndpoint(
    userId: string,
    endpointId: string,
    change: WebhookEndpointChange,
    at: string,
  ): Promise<WebhookEndpoint | null>;
  /** Removes it with its deliveries; false when the user has no such endpoint. */
  deleteWebhookEndpoint(userId: string, endpointId: string): Promise<boolean>;
  /**
   * The user's endpoints subscribed to this event type, disabled ones too: what is owed to a
   * disabled endpoint is held (claimDueDeliveries skips it) and goes out when it is enabled.
   */
  endpointsFor(userId: string, eventType: FileEventType): Promise<WebhookEndpoint[]>;

  /**
   * Records that an event is owed to an endpoint, first attempt due at `delivery.nextAttemptAt`.
   * Idempotent: a second call for the same endpoint and event changes nothing (false).
   */
  enqueueDelivery(
    delivery: Pick<
      WebhookDelivery,
      "id" | "endpointId" | "userId" | "eventId" | "eventType" | "payload" | "maxAttempts" | "createdAt"
    >,
  ): Promise<boolean>;
  /**
   * Leases up to `limit` deliveries that are due at `now` (pending, their endpoint enabled, no
   * live lease) to `owner` until `leaseUntil`. A delivery is leased to one caller only.
   */
  claimDueDeliveries(
    owner: string,
    now: string,
    leaseUntil: string,
    limit: number,
  ): Promise<ClaimedDelivery[]>;
  /**
   * Records an attempt by the lease's owner and moves the delivery on (and, on success, the
   * endpoint's last success). False when the lease was lost meanwhile: nothing is changed then.
   */
  recordAttempt(deliveryId: string, owner: string, outcome: AttemptOutcome): Promise<boolean>;
  /** Disables an endpoint (persistent failure), unless it has succeeded since `unlessSuccessSince`. */
  disableWebhookEndpoint(
    endpointId: string,
    reason: string,
    at: string,
    unlessSuccessSince: string,
  ): Promise<boolean>;
  /** The user's endpoint's deliveries, newest first, `limit` at a time after the cursor. */
  listDeliveries(
    userId: string,
    endpointId: string,
    page: { limit: number; cursor?: string | undefined },
  ): Promise<DeliveryPage>;
  /**
   * Sends a delivery once more, now: pending again with one more attempt allowed. Null when the
   * user's endpoint has no such delivery.
   */
  redeliver(
    userId: string,
    endpointId: string,
    deliveryId: string,
    at: string,
  ): Promise<WebhookDelivery | null>;
  /**
   * Removes up to `limit` finished deliveries (succeeded or failed) last changed before `before`,
   * with their attempts; pending ones are kept whatever their age. Returns how many went.
   */
  pruneDeliveries(before: string, limit: number): Promise<number>;
  /**
   * Ends the deliveries held for a disabled endpoint since before `before` (older than the event
   * log keeps their events): `failed` at `at`, with `reason` as their last error. How many.
   */
  expireHeldDeliveries(before: string, at: string, reason: string): Promise<number>;
}
