import type { ExtractedPassage } from "@locus/contracts";
import type { PreparedPage } from "./image-reader.ts";
import type { OcrEngine } from "./ocr-engine.ts";
import {
  buildOcrPassages,
  DEFAULT_OCR_PASSAGE_OPTIONS,
  medianLineHeight,
  type OcrPassageOptions,
} from "./ocr-passages.ts";

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
}

/**
 * Reads one page: prepared as it is, and when its text turns out small, once more scaled up so
 * that its lines stand about 32 px tall. Small text costs a second reading; ordinary scans do not.
 */
export async function readPage(
  engine: OcrEngine,
  prepare: (upscale: number) => Promise<PreparedPage>,
  pageNumber: number,
  options: ReadPageOptions = {},
): Promise<ExtractedPassage[]> {
  const passageOptions = options.passages ?? DEFAULT_OCR_PASSAGE_OPTIONS;
  let prepared = await prepare(1);
  let read = await engine.recognize(prepared.pgm);
  const height = medianLineHeight(read, passageOptions.minConfidence);
  const small = height !== null && height < SMALL_LINE_PX;
  // A small image where the recogniser found no line at all may hold text too small to find. (One
  // where it found only junk is a picture, not small text: it is not read twice.)
  const tiny = read.lines.length === 0 && Math.max(prepared.width, prepared.height) < 1000;
  if (small || tiny) {
    const factor = Math.min(MAX_UPSCALE, small && height ? TARGET_LINE_PX / height : 2);
    const larger = await prepare(prepared.scale * factor);
    // The pixel budget may not allow a larger reading at all.
    if (larger.width > prepared.width * 1.2) {
      prepared = larger;
      read = await engine.recognize(prepared.pgm);
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
