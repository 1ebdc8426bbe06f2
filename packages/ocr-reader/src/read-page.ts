import type { ExtractedPassage } from "@locus/contracts";
import type { PreparedPage } from "./image-reader.ts";
import { estimateLean, estimateLineHeight } from "./lean.ts";
import type { OcrEngine } from "./ocr-engine.ts";
import {
  buildOcrPassages,
  DEFAULT_OCR_PASSAGE_OPTIONS,
  medianLineHeight,
  type OcrPassageOptions,
} from "./ocr-passages.ts";
import { readPgm } from "./pgm.ts";

/**
 * Lines shorter than this (in read pixels) are small for the recogniser, which reads best when
 * capitals stand 20–30 px tall; such a page is read again scaled up.
 */
const SMALL_LINE_PX = 20;
const TARGET_LINE_PX = 32;
const MAX_UPSCALE = 3;

export interface ReadPageOptions {
  passages?: OcrPassageOptions;
  /**
   * Page units per pixel of the prepared image's source: 1 for an image (locators in its pixels);
   * for a rendered PDF page, points per rendered pixel (locators in PDF points).
   */
  unitsPerPixel?: number;
  /** The file the page is of: its turn with other files' work (see RecognizeOptions). */
  owner?: string | undefined;
}

/** How much to scale a page whose lines stand `height` px tall so that they stand about 32 px. */
function upscaleFor(height: number): number {
  return Math.min(MAX_UPSCALE, TARGET_LINE_PX / height);
}

/**
 * Reads one page at a size fit for the recogniser. The height of its lines is measured from its
 * pixels first (see estimateLineHeight): small text is scaled up so that its lines stand about
 * 32 px tall before the one reading. When the reading shows small lines all the same (the pixels
 * could not tell, or told wrong), the page is read once more, scaled up.
 */
export async function readPage(
  engine: OcrEngine,
  prepare: (upscale: number) => Promise<PreparedPage>,
  pageNumber: number,
  options: ReadPageOptions = {},
): Promise<ExtractedPassage[]> {
  const passageOptions = options.passages ?? DEFAULT_OCR_PASSAGE_OPTIONS;
  const asItIs = await prepare(1);
  const grey = readPgm(asItIs.pgm);
  // Turning and scaling keep the angle: one measure of the lean serves every reading of the page.
  const lean = grey ? estimateLean(grey) : 0;
  const expected = grey ? estimateLineHeight(grey, lean) : null;
  // The pixel budget may not allow a larger reading at all.
  const larger = async (factor: number) => {
    const page = await prepare(asItIs.scale * factor);
    return page.width > asItIs.width * 1.2 ? page : null;
  };
  let prepared =
    (expected !== null && expected < SMALL_LINE_PX && (await larger(upscaleFor(expected)))) || asItIs;
  let read = await engine.recognize(prepared.pgm, { lean, owner: options.owner });
  if (prepared === asItIs) {
    const height = medianLineHeight(read, passageOptions.minConfidence);
    const small = height !== null && height < SMALL_LINE_PX;
    // A small image where the recogniser found no line at all may hold text too small to find. (One
    // where it found only junk is a picture, not small text: it is not read twice.)
    const tiny = read.lines.length === 0 && Math.max(asItIs.width, asItIs.height) < 1000;
    const again = small || tiny ? await larger(small && height ? upscaleFor(height) : 2) : null;
    if (again) {
      prepared = again;
      read = await engine.recognize(prepared.pgm, { lean, owner: options.owner });
    }
  }
  const unitsPerPixel = options.unitsPerPixel ?? 1;
  return buildOcrPassages(
    pageNumber,
    read,
    {
      scale: prepared.scale / unitsPerPixel,
      width: prepared.width,
      height: prepared.height,
      originalWidth: prepared.originalWidth * unitsPerPixel,
      originalHeight: prepared.originalHeight * unitsPerPixel,
    },
    passageOptions,
  );
}
