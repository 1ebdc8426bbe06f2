import type { PopplerTools } from "@locus/pdf-reader";
import type { ExtractorModuleDeps } from "@locus/extraction-job";
import type { RunningModule } from "@locus/runtime";
import { ExtractionPool, type ScannedPageOptions } from "@locus/pdf-extraction";
import { pdfExtractionJob } from "./pdf-extractor.ts";

export interface ExtractorPdfDeps extends ExtractorModuleDeps {
  concurrency: number;
  pageTimeoutMs: number;
  maxHeapMb: number;
  /** Poppler's tools to read PDFs with (pdf.js taking over where they fail); without, pdf.js alone. */
  poppler?: PopplerTools | undefined;
  /** How pages without a real text layer are read; without it they give no passages. */
  scans?: ScannedPageOptions | undefined;
}

export async function startExtractorPdfModule(deps: ExtractorPdfDeps): Promise<RunningModule> {
  const pool = new ExtractionPool({
    threads: deps.concurrency,
    pageTimeoutMs: deps.pageTimeoutMs,
    maxHeapMb: deps.maxHeapMb,
    poppler: deps.poppler,
  });
  // Warmed while the other modules start, and before the process says it has started: the first
  // upload is then read as fast as the later ones. A thread that cannot warm up is not fatal here;
  // the file that needs it will say.
  const started = performance.now();
  const warm = pool.warmUp().then(
    () => deps.logger.info({ ms: Math.round(performance.now() - started) }, "PDF reader ready"),
    (err: unknown) => deps.logger.warn({ err }, "the PDF reader could not warm up"),
  );
  const job = pdfExtractionJob(
    {
      blobs: deps.blobs,
      bus: deps.bus,
      logger: deps.logger,
      heartbeatMs: deps.heartbeatMs,
      observer: deps.observer,
      engines: { pdf: deps.poppler ? "poppler" : "pdfjs", ocr: deps.scans?.engine.kind },
    },
    pool,
    deps.scans,
  );
  await job.subscribe("extractor-pdf", { concurrency: deps.concurrency, maxAttempts: deps.maxAttempts });
  // The bus stops delivering when it closes; the threads end here.
  return { stop: () => pool.destroy(), warm };
}
