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
 * Where a passage sits in its file: one shape for every kind of file, keys that do not apply are
 * left out. Lines count non-empty text lines from the top of the page (1-based).
 */
export const Locator = z.object({
  page: z.number().int().min(1).optional(),
  line: z.number().int().min(1).optional(),
  line_end: z.number().int().min(1).optional(),
  timestamp: z.number().min(0).optional(),
  timestamp_end: z.number().min(0).optional(),
  bbox: BoundingBox.optional(),
  source: PassageSource,
});
export type Locator = z.infer<typeof Locator>;

/** One passage an extractor found: the text and where it is. */
export const ExtractedPassage = z.object({ content: z.string().min(1), locator: Locator });
export type ExtractedPassage = z.infer<typeof ExtractedPassage>;
