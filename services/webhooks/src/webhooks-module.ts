import type { Bus } from "@locus/bus";
import type { ServiceIdentity } from "@locus/http";
import type { MetadataStore } from "@locus/metadata-store";
import type { Logger, RunningModule, WebhookAddressKind } from "@locus/runtime";
import type { Router } from "express";
import { AddressGuard, type Resolver } from "./address-guard.ts";
import { DeliveryWorker, type DeliveryObserver } from "./delivery-worker.ts";
import { subscribeFileEvents } from "./event-consumer.ts";
import { RetrySchedule } from "./retry-schedule.ts";
import { WebhookSender } from "./webhook-sender.ts";
import { webhooksInternalRouter } from "./webhooks-http.ts";
import { WebhooksService } from "./webhooks-service.ts";

export interface WebhooksModuleDeps {
  store: MetadataStore;
  bus: Bus;
  logger: Logger;
  /** Kinds of address receivers may be on besides public ones (LOCUS_WEBHOOK_ALLOW_ADDRESSES). */
  allowAddresses: readonly WebhookAddressKind[];
  /** Waits between attempts (LOCUS_WEBHOOK_RETRY_SCHEDULE_S), in ms. */
  retryScheduleMs: readonly number[];
  /** Seconds a replaced secret keeps signing after a rotation (LOCUS_WEBHOOK_SECRET_OVERLAP_S). */
  secretOverlapS: number;
  timeoutMs: number;
  concurrency: number;
  /**
   * Days the event log keeps an event and the delivery log a finished delivery; a delivery held
   * for a disabled endpoint longer than this fails (LOCUS_WEBHOOK_RETENTION_DAYS).
   */
  retentionDays: number;
  /** When set, the internal HTTP interface is served for gateways in other processes. */
  identity?: ServiceIdentity | undefined;
  observer?: DeliveryObserver | undefined;
  /** Host names to addresses; the system's resolver by default (tests give their own). */
  resolve?: Resolver | undefined;
}

/** Rows removed per statement, so one pass never holds a long lock. */
const PRUNE_BATCH = 500;

export interface WebhooksModule extends RunningModule {
  service: WebhooksService;
  routers: Router[];
}

/**
 * Webhooks: the `file.event` consumer that keeps the event log and records what is owed, the
 * worker that delivers it, and the owner's API (endpoints, delivery log, redelivery, event log).
 */
export async function startWebhooksModule(deps: WebhooksModuleDeps): Promise<WebhooksModule> {
  const guard = new AddressGuard(deps.allowAddresses, deps.resolve);
  const schedule = new RetrySchedule(deps.retryScheduleMs);
  const worker = new DeliveryWorker(
    deps.store,
    new WebhookSender(guard, deps.timeoutMs),
    schedule,
    deps.logger,
    { concurrency: deps.concurrency, timeoutMs: deps.timeoutMs },
    deps.observer,
  );
  const service = new WebhooksService(deps.store, guard, deps.secretOverlapS, () => worker.wake());
  await subscribeFileEvents(deps.bus, deps.store, schedule.maxAttempts, () => worker.wake());
  // Deliveries left pending by the last run (a restart, a crash) go out from the first poll.
  worker.start();
  // The logs keep events and finished deliveries for the retention period. Pending deliveries stay
  // however old while their endpoint is enabled (their attempts end within a day or so); held
  // for a disabled one, they fail once their event has left the event log.
  const prune = async () => {
    const now = new Date();
    const before = new Date(now.getTime() - deps.retentionDays * 86_400_000).toISOString();
    const inBatches = async (step: (limit: number) => Promise<number>) => {
      let removed = 0;
      let batch: number;
      do {
        batch = await step(PRUNE_BATCH);
        removed += batch;
      } while (batch === PRUNE_BATCH);
      return removed;
    };
    try {
      const expired = await deps.store.expireHeldDeliveries(
        before,
        now.toISOString(),
        `Not sent: held for more than ${deps.retentionDays} days while the endpoint was disabled.`,
      );
      const deliveries = await inBatches((limit) => deps.store.pruneDeliveries(before, limit));
      const events = await inBatches((limit) => deps.store.pruneEvents(before, limit));
      if (expired + deliveries + events > 0)
        deps.logger.info(
          { expired, deliveries, events, before },
          "old webhook deliveries and events removed",
        );
    } catch (err) {
      deps.logger.warn({ err }, "removing old webhook deliveries and events failed; trying again in an hour");
    }
  };
  void prune();
  const pruning = setInterval(() => void prune(), 3_600_000);
  pruning.unref();
  return {
    service,
    routers: deps.identity ? [webhooksInternalRouter(service, deps.identity)] : [],
    stop: () => {
      clearInterval(pruning);
      return worker.stop();
    },
  };
}
