import { randomUUID } from "node:crypto";
import type { ClaimedDelivery, WebhookStore } from "@locus/metadata-store";
import type { Logger } from "@locus/runtime";
import type { RetrySchedule } from "./retry-schedule.ts";
import { signingSecrets, webhookHeaders } from "./signing.ts";
import type { WebhookSender } from "./webhook-sender.ts";

export interface DeliveryWorkerOptions {
  /** Attempts sent at once by this process. */
  concurrency: number;
  /** A receiver's time to answer; a lease outlasts it, so a live worker never loses one. */
  timeoutMs: number;
  /** How often due deliveries are looked for when nothing wakes the worker sooner. */
  pollMs?: number;
}

/** What the worker tells whoever counts (metrics). */
export interface DeliveryObserver {
  /** An attempt ended: delivered (a 2xx) or failed, after `seconds`. */
  webhookAttempted(outcome: "delivered" | "failed", seconds: number): void;
}

/**
 * Sends what is owed: claims due deliveries from the store with a lease (so another worker, in
 * this process or another, never sends the same attempt, and a crashed worker's deliveries come
 * back once its lease runs out), signs and posts each, records the attempt, and schedules the next
 * or ends the delivery. Everything it knows is in the store, so a restart loses nothing.
 */
export class DeliveryWorker {
  /** This worker's name on its leases. */
  private readonly owner = `webhooks-${randomUUID()}`;
  private readonly inFlight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(
    private readonly store: WebhookStore,
    private readonly sender: WebhookSender,
    private readonly schedule: RetrySchedule,
    private readonly logger: Logger,
    private readonly options: DeliveryWorkerOptions,
    private readonly observer?: DeliveryObserver,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.wake(), this.options.pollMs ?? 1000);
    this.timer.unref();
    this.wake();
  }

  /** Looks for due deliveries now (a new one was enqueued, or one was asked for again). */
  wake(): void {
    if (this.stopped) return;
    if (this.polling) {
      this.again = true;
      return;
    }
    this.polling = this.poll()
      .catch((err: unknown) => this.logger.error({ err }, "looking for due webhook deliveries failed"))
      .finally(() => {
        this.polling = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Stops claiming and waits for the attempts in flight to be recorded. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.polling;
    await Promise.all(this.inFlight);
  }

  private async poll(): Promise<void> {
    const room = this.options.concurrency - this.inFlight.size;
    if (room <= 0) return;
    const now = new Date();
    // Long enough for the address check, the attempt and recording it, with room to spare.
    const leaseUntil = new Date(now.getTime() + this.options.timeoutMs * 2 + 30_000);
    const claimed = await this.store.claimDueDeliveries(
      this.owner,
      now.toISOString(),
      leaseUntil.toISOString(),
      room,
    );
    for (const delivery of claimed) {
      const work: Promise<void> = this.attempt(delivery)
        .catch((err: unknown) =>
          // Left leased: it comes back when the lease runs out.
          this.logger.error({ err, deliveryId: delivery.delivery.id }, "recording a webhook attempt failed"),
        )
        .finally(() => {
          this.inFlight.delete(work);
          // A slot is free: more may be waiting.
          this.wake();
        });
      this.inFlight.add(work);
    }
  }

  private async attempt({ delivery, endpoint }: ClaimedDelivery): Promise<void> {
    const attemptedAt = new Date();
    const headers = webhookHeaders(
      signingSecrets(endpoint, attemptedAt),
      delivery.eventId,
      delivery.payload,
      attemptedAt,
    );
    const result = await this.sender.send(endpoint.url, delivery.payload, headers);
    this.observer?.webhookAttempted(result.ok ? "delivered" : "failed", result.durationMs / 1000);
    const attempt = delivery.attempts + 1;
    const next = result.ok ? null : this.schedule.nextAttemptAt(attempt, delivery.maxAttempts, new Date());
    const status = result.ok ? "succeeded" : next ? "pending" : "failed";
    const recorded = await this.store.recordAttempt(delivery.id, this.owner, {
      attempt: {
        attemptedAt: attemptedAt.toISOString(),
        statusCode: result.statusCode,
        error: result.error,
        durationMs: result.durationMs,
      },
      status,
      nextAttemptAt: next?.toISOString() ?? null,
    });
    const context = {
      deliveryId: delivery.id,
      endpointId: endpoint.id,
      eventType: delivery.eventType,
      attempt,
      statusCode: result.statusCode,
      durationMs: result.durationMs,
    };
    if (!recorded) {
      // Its lease ran out and another worker took the delivery, or its endpoint was deleted.
      this.logger.warn(context, "webhook attempt not recorded: the delivery was taken over or removed");
      return;
    }
    if (result.ok) {
      this.logger.info(context, "webhook delivered");
      return;
    }
    this.logger.warn(
      { ...context, error: result.error, nextAttemptAt: next?.toISOString() },
      "webhook attempt failed",
    );
    // Persistent failure: every scheduled attempt failed and nothing reached the endpoint since
    // this delivery began. A delivery the owner asked for again does not count: they are watching.
    if (status === "failed" && delivery.redeliveredAt === null) {
      const reason =
        `Disabled after ${attempt} failed attempts to deliver ${delivery.eventType} ` +
        `(event ${delivery.eventId}) with no successful delivery since ${delivery.createdAt}; last error: ${result.error ?? "none"}`;
      const disabled = await this.store.disableWebhookEndpoint(
        endpoint.id,
        reason,
        new Date().toISOString(),
        delivery.createdAt,
      );
      if (disabled)
        this.logger.warn({ endpointId: endpoint.id, userId: endpoint.userId }, "webhook endpoint disabled");
    }
  }
}
