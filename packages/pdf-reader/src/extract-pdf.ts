import type { ExtractedPassage } from "@locus/contracts";
import { joinHyphenatedLines, mendAcross, type Lexicon } from "@locus/passages";
import type { TextLine } from "./lines.ts";
import { buildPassages, DEFAULT_PASSAGE_OPTIONS, type PassageOptions } from "./passages.ts";
import {
  assertReadablePdf,
  openPdf,
  type OpenedPdf,
  type RenderedPage,
  type RenderOptions,
} from "./pdfjs-reader.ts";
import { openPdfWithPoppler, PopplerError, type PopplerLimits, type PopplerTools } from "./poppler-reader.ts";

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
 * A page with fewer letters and digits than this in its text layer may be a scan (perhaps with a
 * page number or a stamp on it): when it shows more than that text, it is read by OCR instead.
 */
export const SCANNED_PAGE_MAX_CHARS = 16;

/** A grey level darker than this is ink (or a drawing), not paper. */
const INK_BELOW = 200;
/** Resolution of the quick look at a nearly empty page: enough to see ink, cheap to draw. */
const GLANCE_DPI = 36;
/** Room around each text line's box for the letters' own reach, in glance pixels. */
const GLANCE_MARGIN_PX = 2;

/**
 * Whether a page shows ink beyond its text layer's lines: a scan under a stamp or a page number,
 * a drawing, a picture of text. A blank page, and a page of a few real words ("GNU Licenses",
 * a chapter's title page), show nothing more: OCR would spend a second on them to find nothing
 * or the same words, so they keep their text layer. Decided on the page drawn at 36 dpi.
 */
async function showsMoreThanText(
  lines: readonly TextLine[],
  render: (options: RenderOptions) => Promise<RenderedPage>,
  maxPixels: number,
): Promise<boolean> {
  const { grey, width, height, pointsPerPixel } = await render({ dpi: GLANCE_DPI, maxPixels });
  const covered = new Uint8Array(width * height);
  for (const { bbox } of lines) {
    // A line without a box cannot be told from a scan's ink: the page is read by OCR.
    if (!bbox) return true;
    const x0 = Math.max(0, Math.floor(bbox.x / pointsPerPixel) - GLANCE_MARGIN_PX);
    const y0 = Math.max(0, Math.floor(bbox.y / pointsPerPixel) - GLANCE_MARGIN_PX);
    const x1 = Math.min(width, Math.ceil((bbox.x + bbox.width) / pointsPerPixel) + GLANCE_MARGIN_PX);
    const y1 = Math.min(height, Math.ceil((bbox.y + bbox.height) / pointsPerPixel) + GLANCE_MARGIN_PX);
    for (let y = y0; y < y1; y++) covered.fill(1, y * width + x0, y * width + x1);
  }
  for (let i = 0; i < grey.length; i++) if (grey[i]! < INK_BELOW && !covered[i]) return true;
  return false;
}

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/gu;

/** Counts letters and digits only until there are enough: a text page is told in a line or two. */
function isNearlyEmpty(lines: readonly { text: string }[]): boolean {
  let chars = 0;
  for (const line of lines) {
    LETTER_OR_DIGIT.lastIndex = 0;
    while (LETTER_OR_DIGIT.test(line.text)) {
      if (++chars >= SCANNED_PAGE_MAX_CHARS) return false;
    }
  }
  return true;
}

/**
 * Every page's text-layer lines cut into passages with page and line locators. Words hyphenated
 * at a line end are made whole on the line where they begin (see joinHyphenatedLines), across a
 * page break too: a page's passages are given once the next page's first line is known. With
 * `scans`, a page whose text layer is missing or nearly empty is drawn and handed to
 * `onScannedPage` instead (its passages come from OCR), unless it shows nothing beyond its text
 * (see showsMoreThanText); without, it gives no passages.
 */
export async function extractPdf(
  data: Uint8Array,
  options: {
    passages?: PassageOptions;
    onPage?: (page: number, pageCount: number) => void;
    scans?: ScanOptions;
    /** Tells broken words from compounds at line ends; without one, every break is joined. */
    lexicon?: Lexicon;
    /** Read with Poppler's tools, pdf.js taking over where they fail; without, pdf.js alone. */
    poppler?: PopplerReading;
  } = {},
): Promise<PdfExtraction> {
  const pdf = await openReader(data, options.poppler);
  const scans = options.scans;
  const passagesOf = (page: number, lines: readonly TextLine[]) =>
    buildPassages(page, lines, options.passages ?? DEFAULT_PASSAGE_OPTIONS);
  async function* passages(): AsyncGenerator<ExtractedPassage> {
    // The last text page read, held until the next page says whether its last word goes on there.
    let held: { page: number; lines: TextLine[] } | null = null;
    try {
      for await (const { page, lines, render } of pdf.pages()) {
        if (scans && isNearlyEmpty(lines) && (await showsMoreThanText(lines, render, scans.maxPixels))) {
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

/** How a PDF is read with Poppler (see poppler-reader.ts). */
export interface PopplerReading {
  tools: PopplerTools;
  limits: PopplerLimits;
  /** Told when Poppler could not read the file (or the rest of it) and pdf.js took over. */
  onFallback?: (reason: string) => void;
}

/**
 * The file's pages from Poppler when given, else from pdf.js. A file Poppler cannot open, or stops
 * reading partway (a damaged file, a flag it honours and pdf.js does not), is read by pdf.js from
 * the first page Poppler did not give: the same file gives the same passages, and a file neither
 * can read fails with pdf.js's reason. pdf.js gets a copy of the bytes, since it may take the
 * buffer over while a Poppler tool is still being fed from it.
 */
async function openReader(data: Uint8Array, poppler: PopplerReading | undefined): Promise<OpenedPdf> {
  assertReadablePdf(data);
  if (!poppler) return openPdf(data);
  const byPdfjs = (reason: string) => {
    poppler.onFallback?.(reason);
    return openPdf(data.slice());
  };
  let primary: OpenedPdf;
  try {
    primary = await openPdfWithPoppler(data, poppler.tools, poppler.limits);
  } catch (err) {
    if (err instanceof PopplerError) return byPdfjs(err.message);
    throw err;
  }
  let rest: OpenedPdf | undefined;
  return {
    pageCount: primary.pageCount,
    async *pages(from = 1) {
      let next = from;
      try {
        for await (const page of primary.pages(from)) {
          next = page.page + 1;
          yield page;
        }
        return;
      } catch (err) {
        if (!(err instanceof PopplerError)) throw err;
        rest = await byPdfjs(`${err.message}; pdf.js read from page ${next}`);
      } finally {
        await primary.close();
      }
      yield* rest.pages(next);
    },
    close: async () => {
      await primary.close();
      await rest?.close();
    },
  };
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
