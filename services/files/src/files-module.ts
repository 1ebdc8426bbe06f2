import type { BlobStore } from "@locus/blob-store";
import type { Bus } from "@locus/bus";
import type { ServiceIdentity } from "@locus/http";
import type { MetadataStore, Plan } from "@locus/metadata-store";
import type { Logger, RunningModule } from "@locus/runtime";
import type { Router } from "express";
import { filesInternalRouter } from "./files-http.ts";
import { FilesService } from "./files-service.ts";
import { OutboxRelay } from "./outbox-relay.ts";
import { previewLinksFor } from "./preview-links.ts";
import { previewRouter } from "./preview-router.ts";
import { PreviewTokens } from "./preview-tokens.ts";
import { subscribeStatusUpdates, type FilesObserver } from "./status-consumer.ts";

export interface FilesModuleDeps {
  store: MetadataStore;
  /** Its own preview links when it can serve browsers (S3); otherwise Locus serves them. */
  blobs: BlobStore;
  bus: Bus;
  logger: Logger;
  /** Told of accepted uploads, finished files, ignored reports and failed publications (metrics). */
  observer?: FilesObserver | undefined;
  signingSecret: string;
  maxUploadBytes: number;
  monthlyUploadQuota: Record<Plan, number>;
  /** Work untouched for this long is published again. */
  stalledAfterMs: number;
  /** When set, the internal HTTP interface is served for gateways in other processes. */
  identity?: ServiceIdentity | undefined;
  /**
   * How unfinished work is recovered once every module of the process has started. "everything"
   * (in-process bus): messages die only with the process, so the work to redo is exactly what was
   * unfinished at start, re-queued once; a periodic sweep would re-queue files still waiting in
   * line. "stalled" (a durable bus): work untouched for `stalledAfterMs` is re-queued, periodically.
   */
  recovery: "everything" | "stalled";
  /** "everything": how often a file's started work may be re-queued before it fails instead. */
  maxRequeues: number;
  /**
   * The meaning stage runs (meaningStageRuns): with "everything", ready files still waiting for
   * their vectors are announced to it again at start, as the messages that asked died with the
   * process that stopped.
   */
  meaningStage?: boolean;
}

export interface FilesModule extends RunningModule {
  service: FilesService;
  /** Preview links (when Locus serves them) and, in the split shape, the internal interface. */
  routers: Router[];
  /** Starts recovery (see FilesModuleDeps.recovery), once every consumer is subscribed. */
  afterStart(): Promise<void>;
}

export async function startFilesModule(deps: FilesModuleDeps): Promise<FilesModule> {
  const tokens = new PreviewTokens(deps.signingSecret);
  const previewLinks = previewLinksFor(deps.blobs, tokens);
  const relay = new OutboxRelay(deps.store, deps.bus, deps.logger, (topic) =>
    deps.observer?.publishFailed(topic),
  );
  const service = new FilesService(
    deps.store,
    deps.blobs,
    deps.bus,
    tokens,
    {
      maxUploadBytes: deps.maxUploadBytes,
      monthlyUploadQuota: deps.monthlyUploadQuota,
      previewLinks,
      observer: deps.observer,
      relay,
    },
    deps.logger,
  );
  await subscribeStatusUpdates(deps.bus, deps.store, deps.logger, deps.observer);
  let timer: NodeJS.Timeout | undefined;
  const sweep = async (stalledAfterMs?: number, maxRequeues?: number) => {
    try {
      await service.recoverUnfinished(stalledAfterMs, maxRequeues);
    } catch (err) {
      deps.logger.error({ err }, "recovery sweep failed");
    }
  };
  return {
    service,
    routers: [
      ...(previewLinks.servedByLocus ? [previewRouter(service, deps.logger)] : []),
      ...(deps.identity ? [filesInternalRouter(service, deps.store, deps.identity)] : []),
    ],
    async afterStart() {
      // Every consumer is subscribed: the outbox's messages (what a process that died left, too)
      // reach them.
      relay.start();
      if (deps.recovery === "everything") {
        await sweep(undefined, deps.maxRequeues);
        if (deps.meaningStage === true) {
          try {
            await service.recoverPendingVectors();
          } catch (err) {
            deps.logger.error({ err }, "recovery of files waiting for their vectors failed");
          }
        }
        return;
      }
      await sweep(deps.stalledAfterMs);
      timer = setInterval(
        () => void sweep(deps.stalledAfterMs),
        Math.max(1000, Math.floor(deps.stalledAfterMs / 2)),
      );
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      await relay.stop();
    },
  };
}
