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
  timeoutMs: number;
  concurrency: number;
  /** Days a finished delivery stays in the log (LOCUS_WEBHOOK_RETENTION_DAYS). */
  retentionDays: number;
  /** When set, the internal HTTP interface is served for gateways in other processes. */
  identity?: ServiceIdentity | undefined;
  observer?: DeliveryObserver | undefined;
  /** Host names to addresses; the system's resolver by default (tests give their own). */
  resolve?: Resolver | undefined;
}

/** Deliveries removed per statement, so one pass never holds a long lock. */
const PRUNE_BATCH = 500;

export interface WebhooksModule extends RunningModule {
  service: WebhooksService;
  routers: Router[];
}

/**
 * Webhooks: the `file.event` consumer that records what is owed, the worker that delivers it, and
 * the owner's API (endpoints, delivery log, redelivery).
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
  const service = new WebhooksService(deps.store, guard, () => worker.wake());
  await subscribeFileEvents(deps.bus, deps.store, schedule.maxAttempts, () => worker.wake());
  // Deliveries left pending by the last run (a restart, a crash) go out from the first poll.
  worker.start();
  // The log keeps finished deliveries for the retention period; pending ones stay however old.
  const prune = async () => {
    const before = new Date(Date.now() - deps.retentionDays * 86_400_000).toISOString();
    try {
      let removed = 0;
      let batch: number;
      do {
        batch = await deps.store.pruneDeliveries(before, PRUNE_BATCH);
        removed += batch;
      } while (batch === PRUNE_BATCH);
      if (removed > 0) deps.logger.info({ removed, before }, "old webhook deliveries removed");
    } catch (err) {
      deps.logger.warn({ err }, "removing old webhook deliveries failed; trying again in an hour");
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
