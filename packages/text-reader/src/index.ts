import type { ExtractedPassage } from "@locus/contracts";
import { DEFAULT_PASSAGE_OPTIONS, type PassageOptions } from "@locus/passages";
import { decodeText, MAX_TEXT_BYTES } from "./decode.ts";
import { htmlLines } from "./html.ts";
import { MAX_TEXT_LINES, type SectionedLine } from "./lines.ts";
import { markdownLines } from "./markdown.ts";
import { buildTextPassages } from "./passages.ts";
import { plainTextLines } from "./plain.ts";

export { decodeText, MAX_TEXT_BYTES, TextReadError, type TextErrorCode } from "./decode.ts";
export { HtmlText, htmlLines } from "./html.ts";
export { LineCollector, MAX_TEXT_LINES, type SectionedLine } from "./lines.ts";
export { markdownLines } from "./markdown.ts";
export { buildTextPassages } from "./passages.ts";
export { plainTextLines } from "./plain.ts";

/** The text formats read natively. */
export type TextFormat = "plain" | "markdown" | "html";

export interface TextReadOptions {
  /** Larger files are refused with TextReadError `too_large`. */
  maxBytes?: number;
  /** Files with more non-empty lines are refused with TextReadError `too_many_lines`. */
  maxLines?: number;
  passages?: PassageOptions;
}

/** A text file's lines as a reader sees them, by its format. */
export function textLines(text: string, format: TextFormat, maxLines = MAX_TEXT_LINES): SectionedLine[] {
  switch (format) {
    case "plain":
      return plainTextLines(text, maxLines);
    case "markdown":
      return markdownLines(text, maxLines);
    case "html":
      return htmlLines(text, maxLines);
  }
}

/**
 * Reads a plain text, Markdown or HTML file's bytes into passages with `line`/`line_end` (non-empty
 * lines of the text as a reader sees it, from 1) and, under headings, `section`. Throws
 * TextReadError when the file is beyond the limits.
 */
export function readTextFile(
  bytes: Uint8Array,
  format: TextFormat,
  options: TextReadOptions = {},
): ExtractedPassage[] {
  const text = decodeText(bytes, options.maxBytes ?? MAX_TEXT_BYTES);
  const lines = textLines(text, format, options.maxLines ?? MAX_TEXT_LINES);
  return buildTextPassages(lines, options.passages ?? DEFAULT_PASSAGE_OPTIONS);
}
