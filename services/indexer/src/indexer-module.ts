import { CONSUMER_GROUPS } from "@locus/contracts";
import type { BlobStore } from "@locus/blob-store";
import { abandonFile, type Bus } from "@locus/bus";
import type { FileRecordReader } from "@locus/metadata-store";
import type { Logger, RunningModule } from "@locus/runtime";
import type { SearchIndex } from "@locus/search-index";
import { PassageIndexer, type IndexerObserver } from "./passage-indexer.ts";
import type { PassageEmbedders } from "./passage-vectors.ts";

export interface IndexerDeps {
  blobs: BlobStore;
  index: SearchIndex;
  embedders: PassageEmbedders;
  bus: Bus;
  logger: Logger;
  /** File records: a file deleted while it was processed is not indexed. */
  files: FileRecordReader;
  maxAttempts: number;
  /** How often a file being indexed says it is alive (embedding a large file can take minutes). */
  heartbeatMs?: number | undefined;
  /** Told how many passages each file indexed (metrics). */
  observer?: IndexerObserver | undefined;
}

export async function startIndexerModule(deps: IndexerDeps): Promise<RunningModule> {
  const indexer = new PassageIndexer(
    deps.blobs,
    deps.index,
    deps.embedders,
    deps.bus,
    deps.logger,
    deps.files,
    deps.heartbeatMs,
    deps.observer,
  );
  await deps.bus.subscribe(
    {
      group: "indexer",
      topics: CONSUMER_GROUPS.indexer,
      // The embedded index has one writer; more at once would only queue on its lock.
      concurrency: 1,
      maxAttempts: deps.maxAttempts,
      // A deleted file's clean-up has no file left to fail: its dead letter is the record.
      abandon: (delivery, reason) =>
        delivery.topic === "file.extracted"
          ? abandonFile(deps, delivery.message, "indexing", reason)
          : Promise.resolve(),
    },
    (delivery) => indexer.handle(delivery),
  );
  return { stop: () => Promise.resolve() };
}
