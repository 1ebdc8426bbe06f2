import type { ExtractedPassage } from "@locus/contracts";
import { buildPassages, DEFAULT_PASSAGE_OPTIONS, type PassageOptions } from "./passages.ts";
import { openPdf, type RenderedPage, type RenderOptions } from "./pdf-reader.ts";

export interface PdfExtraction {
  pageCount: number;
  /** Passages page by page, in reading order. Call once. */
  passages: AsyncGenerator<ExtractedPassage>;
}

/** A page with no real text layer, drawn for OCR. */
export interface ScannedPage extends RenderedPage {
  page: number;
}

export interface ScanOptions extends RenderOptions {
  /**
   * Takes a drawn page to read by OCR; the extraction waits for it to resolve before the next
   * page, so a caller can hold back a reader that runs ahead of its OCR.
   */
  onScannedPage: (scan: ScannedPage) => Promise<void>;
}

/**
 * A page with fewer letters and digits than this in its text layer is taken for a scan (perhaps
 * with a page number or a stamp on it) and read by OCR instead.
 */
export const SCANNED_PAGE_MAX_CHARS = 16;

function isNearlyEmpty(lines: readonly { text: string }[]): boolean {
  let chars = 0;
  for (const line of lines) chars += line.text.match(/[\p{L}\p{N}]/gu)?.length ?? 0;
  return chars < SCANNED_PAGE_MAX_CHARS;
}

/**
 * Every page's text-layer lines cut into passages with page and line locators. With `scans`, a
 * page whose text layer is missing or nearly empty is drawn and handed to `onScannedPage` instead
 * (its passages come from OCR); without, it gives no passages.
 */
export async function extractPdf(
  data: Uint8Array,
  options: {
    passages?: PassageOptions;
    onPage?: (page: number, pageCount: number) => void;
    scans?: ScanOptions;
  } = {},
): Promise<PdfExtraction> {
  const pdf = await openPdf(data);
  const scans = options.scans;
  async function* passages(): AsyncGenerator<ExtractedPassage> {
    try {
      for await (const { page, lines, render } of pdf.pages()) {
        if (scans && isNearlyEmpty(lines)) {
          await scans.onScannedPage({ page, ...(await render(scans)) });
        } else {
          yield* buildPassages(page, lines, options.passages ?? DEFAULT_PASSAGE_OPTIONS);
        }
        options.onPage?.(page, pdf.pageCount);
      }
    } finally {
      await pdf.close();
    }
  }
  return { pageCount: pdf.pageCount, passages: passages() };
}
