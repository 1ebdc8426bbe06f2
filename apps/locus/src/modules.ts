import { createHmac } from "node:crypto";
import type { Router } from "express";
import { dashboardRouter, DashboardSessions, serverNotices } from "@locus/dashboard";
import { DEFAULT_IMAGE_LIMITS, DEFAULT_OCR_PASSAGE_OPTIONS } from "@locus/ocr-reader";
import { startExtractorDocumentModule } from "@locus/extractor-document";
import { startExtractorImageModule } from "@locus/extractor-image";
import { startExtractorPdfModule } from "@locus/extractor-pdf";
import { startExtractorAudioModule, startExtractorVideoModule } from "@locus/extractor-media";
import { FilesHttpClient, startFilesModule, type FilesApi } from "@locus/files";
import { createGatewayRouter, KeyLookupCache, multipartErrors } from "@locus/gateway";
import type { ErrorMapper } from "@locus/http";
import { startEncoderModule } from "@locus/encoder";
import { startIndexerModule } from "@locus/indexer";
import type { Logger, ModuleDescriptor, RunningModule, Target } from "@locus/runtime";
import {
  ObservedSearch,
  SearchHttpClient,
  searchInternalRouter,
  SearchService,
  type SearchApi,
} from "@locus/search";
import { startWebhooksModule, WebhooksHttpClient, type WebhooksApi } from "@locus/webhooks";
import { consumerGroupsOf, type Infrastructure } from "./infrastructure.ts";

/**
 * A started module of this process: what it serves on the process's port, and what it offers the
 * modules started after it (the gateway uses the files and search services when they run here).
 */
export interface LocusModule extends RunningModule {
  /** Routes this module serves. */
  routers?: Router[];
  /** How errors of its own kinds become HTTP answers. */
  errorMappers?: ErrorMapper[];
  files?: FilesApi;
  search?: SearchApi;
  webhooks?: WebhooksApi;
}

const noop = { stop: () => Promise.resolve() };

/**
 * What the targets run on, each a module of its own: built once per process by Infrastructure (as
 * its adapter is configured), started before the first module that declares it in `dependsOn`,
 * and added to /readyz. A process starts only what its targets declare: an indexer never reaches
 * the speech engine, a gateway never opens the search index (its dashboard notices only ask the
 * engines whether they could run).
 */
export const DEPENDENCIES = [
  "metadata-store",
  "blob-store",
  "bus",
  "search-index",
  "ocr",
  "speech",
  "office-converter",
] as const;
export type Dependency = (typeof DEPENDENCIES)[number];
export type ModuleName = Target | Dependency;

type Descriptor = Omit<ModuleDescriptor<ModuleName, LocusModule>, "name">;

/**
 * Every target, every dependency, and what each needs first. `all` is every module in one
 * process, calling each other directly; a single target runs alone and reaches the others through
 * the bus and over HTTP.
 */
export function moduleDescriptors(
  infra: Infrastructure,
  logger: Logger,
): ModuleDescriptor<ModuleName, LocusModule>[] {
  const { config } = infra;
  // A dependency's module builds it (Infrastructure adds its readiness check); Infrastructure
  // closes it, after the modules that use it have stopped and the bus has drained.
  const built = (build: () => unknown): Descriptor => ({
    dependsOn: [],
    start: async () => {
      await build();
      return noop;
    },
  });
  const dependencies: Record<Dependency, Descriptor> = {
    "metadata-store": built(() => infra.metadataStore()),
    "blob-store": built(() => infra.blobs()),
    bus: built(() => infra.messageBus()),
    "search-index": built(() => infra.searchIndex()),
    // Finds the language models now: a missing package stops the start.
    ocr: built(() => infra.ocrEngine()),
    // Recordings fail with the engine's reason while it is missing; /readyz says it is.
    speech: built(() => {
      const speech = infra.speechToText();
      infra.readiness.add("speech", () => speech.check(), { optional: true });
    }),
    // Office documents fail with the converter's reason while it is missing; /readyz says it is.
    "office-converter": built(() => {
      const converter = infra.officeConverter();
      infra.readiness.add(
        "converter",
        async () => {
          const available = await converter.check();
          if (!available.ok) throw new Error(available.reason);
        },
        { optional: true },
      );
    }),
  };
  // Scanned pages are read by OCR where LOCUS_PDF_OCR is on.
  const pdfScanDependencies: Dependency[] = config.ocr.pdfScans ? ["ocr"] : [];
  const log = (module: string) => logger.child({ module });
  // Internal HTTP interfaces are served only when other processes need them.
  const identity = config.split ? infra.serviceIdentity() : undefined;
  const ocrPassages = async () => {
    const lexicon = await infra.lexicon();
    return {
      ...DEFAULT_OCR_PASSAGE_OPTIONS,
      minConfidence: config.ocr.minConfidence,
      ...(lexicon ? { lexicon } : {}),
    };
  };
  // Pages without a text layer, in uploaded PDFs and in office documents' renditions alike.
  const pdfScans = async () =>
    config.ocr.pdfScans
      ? {
          engine: infra.ocrEngine(),
          dpi: config.ocr.pdfDpi,
          maxPixels: DEFAULT_IMAGE_LIMITS.maxOcrPixels,
          passages: await ocrPassages(),
        }
      : undefined;
  // What every module that works through the bus gets alike, the extractors and the indexer. Long
  // work says it is alive four times per stall delay: the sweep never takes it for lost work.
  const jobDeps = async (name: Target) => ({
    blobs: infra.blobs(),
    bus: await infra.messageBus(),
    logger: log(name),
    maxAttempts: config.maxAttempts,
    heartbeatMs: Math.max(1000, Math.floor(config.stalledAfterMs / 4)),
    observer: infra.metrics,
  });
  // Every target but `all`, each once (the type says so: a target without its module does not compile).
  const modules: { [T in Exclude<Target, "all">]: Descriptor } = {
    files: {
      dependsOn: ["metadata-store", "blob-store", "bus"],
      start: async () => {
        const store = await infra.metadataStore();
        const bus = await infra.messageBus();
        const filesLogger = log("files");
        infra.metrics.watchStalledFiles(async () => {
          const updatedBefore = new Date(Date.now() - config.stalledAfterMs).toISOString();
          return (await store.listUnfinishedFiles({ limit: 1000, updatedBefore })).length;
        });
        // Every group's queue depth, from here rather than from each group's consumers: a group
        // whose consumers are gone, crash-looping or hung must still show what waits for it.
        infra.metrics.watchQueues(async () => {
          const depths: Record<string, number> = {};
          for (const group of Object.keys(consumerGroupsOf(config))) {
            try {
              depths[group] = await bus.queueDepth(group);
            } catch (err) {
              filesLogger.debug({ err, group }, "could not read the queue's depth for metrics");
            }
          }
          return depths;
        });
        infra.metrics.countFileOutcomesFromZero();
        const files = await startFilesModule({
          store,
          blobs: infra.blobs(),
          bus,
          logger: filesLogger,
          signingSecret: await infra.signingSecret(),
          maxUploadBytes: config.maxUploadBytes,
          monthlyUploadQuota: config.monthlyUploadQuota,
          stalledAfterMs: config.stalledAfterMs,
          identity,
          recovery: infra.busIsInProcess ? "everything" : "stalled",
          maxRequeues: config.busDeliveryLimit,
          meaningStage: config.meaningStage,
          observer: infra.metrics,
        });
        return {
          routers: files.routers,
          files: files.service,
          stop: () => files.stop(),
          afterStart: () => files.afterStart(),
        };
      },
    },
    "extractor-pdf": {
      dependsOn: ["blob-store", "bus", ...pdfScanDependencies],
      start: async () =>
        startExtractorPdfModule({
          ...(await jobDeps("extractor-pdf")),
          concurrency: config.extractConcurrency,
          pageTimeoutMs: config.pdfPageTimeoutMs,
          maxHeapMb: config.extractMaxHeapMb,
          poppler: infra.pdfTools(),
          scans: await pdfScans(),
        }),
    },
    "extractor-document": {
      dependsOn: ["blob-store", "bus", "office-converter", ...pdfScanDependencies],
      start: async () => {
        return startExtractorDocumentModule({
          ...(await jobDeps("extractor-document")),
          converter: infra.officeConverter(),
          macros: config.documents.macros,
          concurrency: config.extractConcurrency,
          maxTextBytes: config.maxUploadBytes,
          pageTimeoutMs: config.pdfPageTimeoutMs,
          maxHeapMb: config.extractMaxHeapMb,
          poppler: infra.pdfTools(),
          scans: await pdfScans(),
        });
      },
    },
    "extractor-image": {
      dependsOn: ["blob-store", "bus", "ocr"],
      start: async () =>
        startExtractorImageModule({
          ...(await jobDeps("extractor-image")),
          engine: infra.ocrEngine(),
          limits: { ...DEFAULT_IMAGE_LIMITS, maxPixels: config.ocr.maxImagePixels },
          passages: await ocrPassages(),
        }),
    },
    "extractor-audio": {
      dependsOn: ["blob-store", "bus", "speech"],
      start: async () => {
        return startExtractorAudioModule({
          ...(await jobDeps("extractor-audio")),
          speech: infra.speechToText(),
          maxDurationS: config.speech.maxDurationS,
          ffmpegPath: config.speech.ffmpegPath,
          concurrency: config.extractConcurrency,
        });
      },
    },
    "extractor-video": {
      dependsOn: ["blob-store", "bus", "speech", "ocr"],
      start: async () => {
        return startExtractorVideoModule({
          ...(await jobDeps("extractor-video")),
          speech: infra.speechToText(),
          engine: infra.ocrEngine(),
          minConfidence: config.ocr.minConfidence,
          lexicon: await infra.lexicon(),
          maxDurationS: config.speech.maxDurationS,
          ffmpegPath: config.speech.ffmpegPath,
          concurrency: config.extractConcurrency,
        });
      },
    },
    indexer: {
      dependsOn: ["blob-store", "bus", "search-index", "metadata-store"],
      start: async () =>
        startIndexerModule({
          ...(await jobDeps("indexer")),
          index: await infra.searchIndex(),
          // With the meaning stage, passages are written without their offline vectors: the
          // encoder group adds them once the file is ready (and this process loads no model).
          embedders: config.meaningStage ? {} : await infra.embedders("indexing"),
          files: await infra.metadataStore(),
        }),
    },
    encoder: {
      dependsOn: config.meaningStage ? ["search-index", "bus"] : [],
      start: async () =>
        config.meaningStage
          ? startEncoderModule({
              index: await infra.searchIndex(),
              embedder: await infra.offlineEmbedder(),
              bus: await infra.messageBus(),
              logger: log("encoder"),
              maxAttempts: config.maxAttempts,
              observer: infra.metrics,
            })
          : noop,
    },
    search: {
      dependsOn: ["search-index", "metadata-store"],
      start: async () => {
        const service = new SearchService(
          await infra.searchIndex(),
          await infra.metadataStore(),
          { embedders: await infra.embedders("search"), summarizers: await infra.summarizers() },
          log("search"),
        );
        // Timed here, where the work is, so the gateway's process never counts it twice.
        const search = new ObservedSearch(service, infra.metrics, config.adapters.searchIndex);
        return { ...noop, search, routers: identity ? [searchInternalRouter(search, identity)] : [] };
      },
    },
    webhooks: {
      dependsOn: ["metadata-store", "bus"],
      start: async () => {
        const { webhooks: settings } = config;
        const module = await startWebhooksModule({
          store: await infra.metadataStore(),
          bus: await infra.messageBus(),
          logger: log("webhooks"),
          allowAddresses: settings.allowAddresses,
          retryScheduleMs: settings.retryScheduleMs,
          secretOverlapS: settings.secretOverlapS,
          timeoutMs: settings.timeoutMs,
          concurrency: settings.concurrency,
          retentionDays: settings.retentionDays,
          identity,
          observer: infra.metrics,
        });
        return { webhooks: module.service, routers: module.routers, stop: () => module.stop() };
      },
    },
    gateway: {
      dependsOn: ["metadata-store"],
      after: ["files", "search", "webhooks"],
      start: async (started) => {
        // In this process when it runs here; over HTTP, as the same interface, when it does not.
        const remote = infra.serviceIdentity();
        const files: FilesApi | undefined =
          started.get("files")?.files ??
          (config.filesUrl && remote ? new FilesHttpClient(config.filesUrl, remote) : undefined);
        const search: SearchApi | undefined =
          started.get("search")?.search ??
          (config.searchUrl && remote ? new SearchHttpClient(config.searchUrl, remote) : undefined);
        if (!files || !search)
          throw new Error("the gateway needs the files and search services, here or by URL");
        const webhooks: WebhooksApi | undefined =
          started.get("webhooks")?.webhooks ??
          (config.webhooksUrl && remote ? new WebhooksHttpClient(config.webhooksUrl, remote) : undefined);
        const store = await infra.metadataStore();
        // Key lookups are kept where the store tells of every change to keys (Postgres), and
        // looked up on every request where it cannot (SQLite).
        const keys = new KeyLookupCache(store);
        const keyChanges = store.watchKeyChanges(keys);
        // The web dashboard is served by every gateway. Its sessions are signed with a key of their
        // own, derived from the signing secret (shared by every gateway, like preview links).
        const sessions = new DashboardSessions(
          store,
          createHmac("sha256", await infra.signingSecret())
            .update("locus dashboard sessions v1")
            .digest(),
          { secureCookie: config.publicUrl?.startsWith("https://") ?? false },
        );
        return {
          stop: async () => {
            await keyChanges?.close();
          },
          routers: [
            createGatewayRouter({
              store,
              keys,
              files,
              search,
              webhooks,
              logger: log("gateway"),
              maxUploadBytes: config.maxUploadBytes,
              rateLimits: config.rateLimits,
              limiterCounters: infra.limiterCounters(),
              publicUrl: config.publicUrl,
              sessions,
              observer: infra.metrics,
            }),
            dashboardRouter({
              store,
              sessions,
              logger: log("dashboard"),
              rateLimits: config.rateLimits,
              monthlyUploadQuota: config.monthlyUploadQuota,
              maxUploadBytes: config.maxUploadBytes,
              signUpsPerHour: config.signUpsPerHour,
              limiterCounters: infra.limiterCounters(),
              previewOrigin: await infra.previewOrigin(),
              notices: serverNotices({
                speech: () => infra.speechToText().check(),
                officeConversion: () => infra.officeConverter().check(),
                ...(config.ai.embedder === "encoder"
                  ? { sentenceEncoder: () => infra.sentenceEncoderState() }
                  : {}),
              }),
            }),
          ],
          errorMappers: [multipartErrors(config.maxUploadBytes)],
        };
      },
    },
  };
  const named = (descriptors: Record<string, Descriptor>) =>
    Object.entries(descriptors).map(([name, d]) => ({ name: name as ModuleName, ...d }));
  const targets = named(modules);
  return [
    ...named(dependencies),
    ...targets,
    // `all`: every target above, started in this order (each after what it needs and uses).
    { name: "all", dependsOn: targets.map((m) => m.name), start: () => Promise.resolve(noop) },
  ];
}
