import { z } from "zod";

/** How a passage was found in its file. */
export const PassageSource = z.enum(["text", "ocr", "speech", "screen"]);
export type PassageSource = z.infer<typeof PassageSource>;

export const BoundingBox = z.object({
  x: z.number(),
  y: z.number(),
  width: z.number(),
  height: z.number(),
});
export type BoundingBox = z.infer<typeof BoundingBox>;

/**
 * A box as the API shows it: to a tenth of a point (or pixel), finer than any viewer draws, and
 * without the binary noise of the arithmetic behind it (13.100000000000023 is 13.1).
 */
export function publicBox(box: BoundingBox): BoundingBox {
  const tenth = (n: number) => Math.round(n * 10) / 10;
  return { x: tenth(box.x), y: tenth(box.y), width: tenth(box.width), height: tenth(box.height) };
}

/** The smallest box around all of `boxes` (at least one). */
export function boxAround(boxes: readonly BoundingBox[]): BoundingBox {
  const x0 = Math.min(...boxes.map((b) => b.x));
  const y0 = Math.min(...boxes.map((b) => b.y));
  const x1 = Math.max(...boxes.map((b) => b.x + b.width));
  const y1 = Math.max(...boxes.map((b) => b.y + b.height));
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

/**
 * Where a passage sits in its file: one shape for every kind of file, keys that do not apply are
 * left out. Lines count non-empty text lines from the top of the page (1-based), or of the document
 * for text files, which have no pages. The descriptions
 * are the API's documentation: /openapi.json is generated from this schema.
 */
export const Locator = z
  .object({
    page: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        "Physical page of a PDF or of a multi-page TIFF, from 1; 1 for other images. For an office " +
          "document, the page of the PDF it was converted to (the preview link's): slides are pages, " +
          "a spreadsheet's pages are as LibreOffice prints them. Left out for text files, which have no pages.",
      ),
    line: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        "First line, counting non-empty lines from the top of the page, from 1. For text, Markdown " +
          "and HTML files, from the top of the document, as a reader sees it (HTML without scripts, " +
          "styles or hidden text; Markdown as rendered).",
      ),
    line_end: z.number().int().min(1).optional().describe("Last line of the passage."),
    timestamp: z
      .number()
      .min(0)
      .optional()
      .describe(
        "Seconds into audio or video where the passage starts (to 0.01 s). In search results for " +
          "speech, where the matched words start, less 0.3 s so that playback begins just before them.",
      ),
    timestamp_end: z
      .number()
      .min(0)
      .optional()
      .describe("Seconds where it ends: in search results for speech, where the last matched word ends."),
    bbox: BoundingBox.optional().describe(
      "Where the passage's lines sit (in search results, the matched lines), from the top-left " +
        "corner: in pixels of the image as displayed (EXIF orientation applied) for images, in PDF " +
        "points (1/72 inch, the page at 72 dpi, as a viewer shows it) for PDF pages, text or scanned; " +
        "to a tenth.",
    ),
    source: PassageSource.describe(
      "`text`: a PDF's text layer (an office document's rendition's), or a text file's text; `ocr`: read from an image or a scanned page; `speech`: spoken in " +
        "a recording or a video; `screen`: shown on screen in a video (with the interval it is visible).",
    ),
    section: z
      .array(z.string())
      .optional()
      .describe(
        "For Markdown and HTML: the headings the passage sits under, from the top level down " +
          '(e.g. `["Installation", "From source"]`). Left out before the first heading.',
      ),
    /** 0–1: how sure the recogniser was of the passage's text (OCR and speech). */
    confidence: z
      .number()
      .min(0)
      .max(1)
      .optional()
      .describe("For OCR and speech: the recogniser's mean confidence in the passage's text."),
  })
  .describe("Where a passage is. Keys that do not apply to the file's kind are left out.");
export type Locator = z.infer<typeof Locator>;

/**
 * A locator as stored with its passage, with what search needs to narrow it to the words that
 * match (never returned):
 * - `line_boxes`: each content line's box (PDF text and OCR), so `bbox` narrows with the lines;
 * - `line_joins`: content lines (from 0) whose last word was hyphenated at the line end and
 *   completed from the next line, so a match on it covers both lines;
 * - `word_times`: for speech, the start and end (seconds) of each word of the content, words
 *   being what whitespace separates, so `timestamp` narrows to the words that match.
 */
export const StoredLocator = Locator.extend({
  line_boxes: z.array(BoundingBox).optional(),
  line_joins: z.array(z.number().int().min(0)).optional(),
  word_times: z.array(z.tuple([z.number().min(0), z.number().min(0)])).optional(),
});
export type StoredLocator = z.infer<typeof StoredLocator>;

/** A stored locator as the API shows it: without what is kept only for narrowing, its box rounded. */
export function publicLocator(stored: StoredLocator): Locator {
  const { line_boxes: _boxes, line_joins: _joins, word_times: _times, ...locator } = stored;
  return locator.bbox ? { ...locator, bbox: publicBox(locator.bbox) } : locator;
}

/** One passage an extractor found: the text and where it is. */
export const ExtractedPassage = z.object({ content: z.string().min(1), locator: StoredLocator });
export type ExtractedPassage = z.infer<typeof ExtractedPassage>;
