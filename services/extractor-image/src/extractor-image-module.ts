import { extractImage, type ImageLimits, type OcrEngine, type OcrPassageOptions } from "@locus/ocr-reader";
import { ExtractionJob, type ExtractorModuleDeps } from "@locus/extraction-job";
import type { RunningModule } from "@locus/runtime";

export interface ExtractorImageDeps extends ExtractorModuleDeps {
  /** Shared with the PDF extractor of the same process; closed by whoever made it. */
  engine: OcrEngine;
  limits: ImageLimits;
  passages: OcrPassageOptions;
}

/**
 * Reads uploaded images (PNG, JPEG, WebP, TIFF with every page, GIF, BMP) by OCR into passages
 * with page, line and bbox locators. An image that cannot be read fails its file with the reason;
 * the process lives on.
 */
export async function startExtractorImageModule(deps: ExtractorImageDeps): Promise<RunningModule> {
  const job = new ExtractionJob(
    {
      blobs: deps.blobs,
      bus: deps.bus,
      logger: deps.logger,
      kindName: "image",
      heartbeatMs: deps.heartbeatMs,
      observer: deps.observer,
      engines: { ocr: deps.engine.kind },
    },
    // An image that cannot be read throws ImageReadError or OcrTimeoutError: FileRejectedErrors.
    async function* (data, progress, { fileId }) {
      const pageCount = yield* extractImage(data, deps.engine, {
        owner: fileId,
        limits: deps.limits,
        passages: deps.passages,
        onPage: (page, pageCount) => progress(page / pageCount),
      });
      return { pageCount };
    },
  );
  // One image at a time per recogniser: more would only queue inside the engine.
  await job.subscribe("extractor-image", { concurrency: deps.engine.workers, maxAttempts: deps.maxAttempts });
  return { stop: () => Promise.resolve() };
}
