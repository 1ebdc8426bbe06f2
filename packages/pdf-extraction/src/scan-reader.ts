import { FileRejectedError, type ExtractedPassage } from "@locus/contracts";
import {
  isUnreadableImage,
  openImage,
  readPage,
  type OcrEngine,
  type OcrPassageOptions,
} from "@locus/ocr-reader";
import type { ScannedPage } from "@locus/pdf-reader";
import type { ScanReader } from "./extraction-pool.ts";

export interface ScannedPageOptions {
  engine: OcrEngine;
  /** Resolution scanned pages are drawn at for OCR. */
  dpi: number;
  /** Most pixels one drawn page may have. */
  maxPixels: number;
  passages?: OcrPassageOptions;
}

/**
 * Reads a scanned page drawn by the PDF worker: locators in PDF points (the page at 72 dpi), so
 * they mean the same whatever resolution the page was drawn at.
 */
export function scanReader(options: ScannedPageOptions): ScanReader {
  return {
    dpi: options.dpi,
    maxPixels: options.maxPixels,
    window: options.engine.workers,
    async read(scan: ScannedPage, owner?: string): Promise<ExtractedPassage[]> {
      try {
        const image = await openImage(scan);
        return await readPage(options.engine, (upscale) => image.page(1, upscale), scan.page, {
          unitsPerPixel: scan.pointsPerPixel,
          owner,
          ...(options.passages ? { passages: options.passages } : {}),
        });
      } catch (err) {
        if (isUnreadableImage(err)) {
          throw new FileRejectedError(err.code, `Page ${scan.page} of the PDF: ${err.message}`, {
            cause: err,
          });
        }
        throw err;
      }
    },
  };
}
