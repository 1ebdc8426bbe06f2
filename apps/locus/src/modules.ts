import type { FilesModule } from "@locus/files";
import { startExtractorPdfModule } from "@locus/extractor-pdf";
import { startFilesModule } from "@locus/files";
import { startGatewayModule, type GatewayModule } from "@locus/gateway";
import { startIndexerModule } from "@locus/indexer";
import type { Logger, ModuleDescriptor, Target } from "@locus/runtime";
import { SearchService } from "@locus/search";
import type { Infrastructure } from "./infrastructure.ts";

/** Work that sat in `pending` or `processing` this long without a word is published again. */
const STALLED_AFTER_MS = 10 * 60_000;

/** What running modules offer each other inside one process. */
export interface Running {
  files?: FilesModule;
  search?: SearchService;
  gateway?: GatewayModule;
}

/**
 * Every target and what it needs first. `all` is every module in one process; single targets are
 * for the split shape.
 */
export function moduleDescriptors(
  infra: Infrastructure,
  logger: Logger,
  running: Running,
): ModuleDescriptor<Target>[] {
  const { config } = infra;
  const log = (module: string) => logger.child({ module });
  const noop = { stop: () => Promise.resolve() };
  return [
    {
      name: "files",
      dependsOn: [],
      start: async () => {
        running.files = await startFilesModule({
          store: await infra.metadataStore(),
          blobs: infra.blobs(),
          bus: infra.messageBus(),
          logger: log("files"),
          signingSecret: await infra.signingSecret(),
          maxUploadBytes: config.maxUploadBytes,
          monthlyUploadQuota: config.monthlyUploadQuota,
          stalledAfterMs: STALLED_AFTER_MS,
        });
        return running.files;
      },
    },
    {
      name: "extractor-pdf",
      dependsOn: [],
      start: () =>
        startExtractorPdfModule({
          blobs: infra.blobs(),
          bus: infra.messageBus(),
          logger: log("extractor-pdf"),
          concurrency: config.extractConcurrency,
          maxAttempts: config.maxAttempts,
          pageTimeoutMs: config.pdfPageTimeoutMs,
          maxHeapMb: config.extractMaxHeapMb,
        }),
    },
    {
      name: "indexer",
      dependsOn: [],
      start: () =>
        startIndexerModule({
          blobs: infra.blobs(),
          index: infra.searchIndex(),
          bus: infra.messageBus(),
          logger: log("indexer"),
          maxAttempts: config.maxAttempts,
        }),
    },
    {
      name: "search",
      dependsOn: [],
      start: async () => {
        running.search = new SearchService(infra.searchIndex(), await infra.metadataStore());
        return noop;
      },
    },
    {
      name: "gateway",
      dependsOn: ["files", "search"],
      start: async () => {
        const { files, search } = running;
        if (!files || !search) throw new Error("gateway needs the files and search modules in this process");
        running.gateway = await startGatewayModule({
          store: await infra.metadataStore(),
          files: files.service,
          search,
          previewRouter: files.router,
          logger: log("gateway"),
          maxUploadBytes: config.maxUploadBytes,
          rateLimits: config.rateLimits,
          publicUrl: config.publicUrl,
          readiness: () => infra.readiness(),
          host: config.host,
          port: config.port,
        });
        return running.gateway;
      },
    },
    {
      name: "all",
      // The gateway last: it takes requests only once every consumer is subscribed.
      dependsOn: ["files", "search", "extractor-pdf", "indexer", "gateway"],
      start: () => Promise.resolve(noop),
    },
  ];
}
