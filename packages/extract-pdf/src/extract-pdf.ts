import type { ExtractedPassage } from "@locus/contracts";
import { joinHyphenatedLines, mendAcross, type Lexicon } from "@locus/passages";
import type { TextLine } from "./lines.ts";
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
 * Every page's text-layer lines cut into passages with page and line locators. Words hyphenated
 * at a line end are made whole on the line where they begin (see joinHyphenatedLines), across a
 * page break too: a page's passages are given once the next page's first line is known. With
 * `scans`, a page whose text layer is missing or nearly empty is drawn and handed to
 * `onScannedPage` instead (its passages come from OCR); without, it gives no passages.
 */
export async function extractPdf(
  data: Uint8Array,
  options: {
    passages?: PassageOptions;
    onPage?: (page: number, pageCount: number) => void;
    scans?: ScanOptions;
    /** Tells broken words from compounds at line ends; without one, every break is joined. */
    lexicon?: Lexicon;
  } = {},
): Promise<PdfExtraction> {
  const pdf = await openPdf(data);
  const scans = options.scans;
  const passagesOf = (page: number, lines: readonly TextLine[]) =>
    buildPassages(page, lines, options.passages ?? DEFAULT_PASSAGE_OPTIONS);
  async function* passages(): AsyncGenerator<ExtractedPassage> {
    // The last text page read, held until the next page says whether its last word goes on there.
    let held: { page: number; lines: TextLine[] } | null = null;
    try {
      for await (const { page, lines, render } of pdf.pages()) {
        if (scans && isNearlyEmpty(lines)) {
          if (held) yield* passagesOf(held.page, held.lines);
          held = null;
          await scans.onScannedPage({ page, ...(await render(scans)) });
        } else {
          const mended = joinHyphenatedLines(lines, options.lexicon);
          if (held) {
            mendPageBreak(held.lines, mended, options.lexicon);
            yield* passagesOf(held.page, held.lines);
          }
          held = { page, lines: mended };
        }
        options.onPage?.(page, pdf.pageCount);
      }
      if (held) yield* passagesOf(held.page, held.lines);
    } finally {
      await pdf.close();
    }
  }
  return { pageCount: pdf.pageCount, passages: passages() };
}

/**
 * A word hyphenated on the last line of a page and finished on the first line of the next is
 * made whole on the first page, where a reader starts reading it.
 */
function mendPageBreak(before: TextLine[], after: TextLine[], lexicon?: Lexicon): void {
  const last = before.at(-1);
  const first = after[0];
  if (!last || !first) return;
  const mended = mendAcross(last.text, first.text, lexicon);
  if (!mended) return;
  last.text = mended.head;
  first.text = mended.rest;
}
