import type { ExtractedPassage } from "@locus/contracts";
import { DEFAULT_IMAGE_LIMITS, ImageReadError, openImage, type ImageLimits } from "./image-reader.ts";
import { OcrTimeoutError, type OcrEngine } from "./ocr-engine.ts";
import type { OcrPassageOptions } from "./ocr-passages.ts";
import { readPage } from "./read-page.ts";

export interface ImageExtractionOptions {
  limits?: ImageLimits;
  passages?: OcrPassageOptions;
  /** Called as each page is read, for progress. */
  onPage?: (page: number, pageCount: number) => void;
  /** The file the image is: its pages take their turn with other files' work. */
  owner?: string | undefined;
}

/**
 * Reads the text of an image, page by page (a TIFF may have many): passages with page, line and
 * bbox locators in the image's displayed pixels, `source: "ocr"`. Returns the page count as the
 * generator's final value. Throws ImageReadError for images that cannot be read and
 * OcrTimeoutError for a page the recogniser gave up on.
 */
export async function* extractImage(
  data: Buffer,
  engine: OcrEngine,
  options: ImageExtractionOptions = {},
): AsyncGenerator<ExtractedPassage, number> {
  const image = await openImage(data, options.limits ?? DEFAULT_IMAGE_LIMITS);
  for (let page = 1; page <= image.pageCount; page++) {
    yield* await readPage(engine, (upscale) => image.page(page, upscale), page, {
      ...(options.passages ? { passages: options.passages } : {}),
      owner: options.owner,
    });
    options.onPage?.(page, image.pageCount);
  }
  return image.pageCount;
}

/** True for the errors that say an image cannot be read (rather than that reading broke down). */
export function isUnreadableImage(err: unknown): err is ImageReadError | OcrTimeoutError {
  return err instanceof ImageReadError || err instanceof OcrTimeoutError;
}
