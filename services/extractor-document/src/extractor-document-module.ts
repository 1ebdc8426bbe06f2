import { ExtractionPool, scanReader, type ScannedPageOptions } from "@locus/pdf-extraction";
import type { OfficeConverter } from "@locus/office-converter";
import type { PopplerTools } from "@locus/pdf-reader";
import type { ExtractorModuleDeps } from "@locus/extraction-job";
import type { RunningModule } from "@locus/runtime";
import { documentExtractionJob, type MacroPolicy } from "./document-extractor.ts";

export interface ExtractorDocumentDeps extends ExtractorModuleDeps {
  converter: OfficeConverter;
  macros: MacroPolicy;
  /** Documents read at once: each office document has a LibreOffice process of its own. */
  concurrency: number;
  /** Larger text files are refused. */
  maxTextBytes: number;
  /** How the PDF renditions are read: as the PDF extractor reads PDFs (see ExtractorPdfDeps). */
  pageTimeoutMs: number;
  maxHeapMb: number;
  poppler?: PopplerTools | undefined;
  scans?: ScannedPageOptions | undefined;
}

/**
 * Reads uploaded documents: TXT, Markdown and HTML as they are; DOCX, DOC, ODT, RTF, PPTX, PPT,
 * ODP, XLSX, XLS and ODS converted to PDF by LibreOffice, then read page by page. Where LibreOffice
 * is missing, text formats are still read and office documents fail with `converter_unavailable`;
 * start-up says so once.
 */
export async function startExtractorDocumentModule(deps: ExtractorDocumentDeps): Promise<RunningModule> {
  const available = await deps.converter.check();
  if (available.ok)
    deps.logger.info({ libreoffice: available.version }, "office documents are converted by LibreOffice");
  else
    deps.logger.warn({ reason: available.reason }, "office documents will fail: LibreOffice cannot run here");
  const pool = new ExtractionPool({
    threads: deps.concurrency,
    pageTimeoutMs: deps.pageTimeoutMs,
    maxHeapMb: deps.maxHeapMb,
    poppler: deps.poppler,
  });
  const job = documentExtractionJob(
    {
      blobs: deps.blobs,
      bus: deps.bus,
      logger: deps.logger,
      heartbeatMs: deps.heartbeatMs,
      observer: deps.observer,
      engines: { pdf: deps.poppler ? "poppler" : "pdfjs", ocr: deps.scans?.engine.kind },
    },
    {
      blobs: deps.blobs,
      converter: deps.converter,
      pool,
      scans: deps.scans ? scanReader(deps.scans) : undefined,
      macros: deps.macros,
      maxTextBytes: deps.maxTextBytes,
    },
  );
  await job.subscribe("extractor-document", { concurrency: deps.concurrency, maxAttempts: deps.maxAttempts });
  return { stop: () => pool.destroy() };
}
