import type { BlobStore } from "@locus/blob-store";
import type { Bus } from "@locus/bus";
import type { Logger, Stoppable } from "@locus/runtime";
import { PdfExtractor } from "./pdf-extractor.ts";

export interface ExtractorPdfDeps {
  blobs: BlobStore;
  bus: Bus;
  logger: Logger;
  concurrency: number;
  maxAttempts: number;
}

export async function startExtractorPdfModule(deps: ExtractorPdfDeps): Promise<Stoppable> {
  const extractor = new PdfExtractor(deps.blobs, deps.bus, deps.logger);
  await deps.bus.subscribe(
    {
      group: "extractor-pdf",
      topics: ["file.uploaded.pdf"],
      concurrency: deps.concurrency,
      maxAttempts: deps.maxAttempts,
    },
    (delivery) => extractor.handle(delivery),
  );
  // Unsubscribing happens when the bus closes, after every module has stopped.
  return { stop: () => Promise.resolve() };
}
