import { ExtractionJob, type ExtractionJobDeps } from "@locus/extraction-job";
import { scanReader, type ExtractionPool, type ScannedPageOptions } from "@locus/pdf-extraction";

/**
 * Turns an uploaded PDF into stored passages: the text layer where a page has one, OCR where it
 * is missing or nearly empty (when an OCR engine is given).
 */
export function pdfExtractionJob(
  deps: Omit<ExtractionJobDeps, "kindName">,
  pool: ExtractionPool,
  scans: ScannedPageOptions | undefined,
): ExtractionJob {
  const reader = scans ? scanReader(scans) : undefined;
  return new ExtractionJob({ ...deps, kindName: "PDF" }, async function* (data, progress, { fileId }) {
    const pageCount = yield* pool.extract(
      new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
      (page, pageCount) => progress(page / pageCount),
      reader && { ...reader, read: (scan) => reader.read(scan, fileId) },
      (reason) => deps.logger.info({ fileId, reason }, "Poppler could not read this PDF; pdf.js read it"),
    );
    return { pageCount };
  });
}
