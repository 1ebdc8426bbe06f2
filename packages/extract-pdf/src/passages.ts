import type { ExtractedPassage } from "@locus/contracts";
import { DEFAULT_PASSAGE_OPTIONS, joinWindow, windowLines, type PassageOptions } from "@locus/passages";
import type { TextLine } from "./lines.ts";

export { DEFAULT_PASSAGE_OPTIONS, type PassageOptions };

/** Cuts a page's text-layer lines into short overlapping passages with page and line locators. */
export function buildPassages(
  page: number,
  lines: readonly TextLine[],
  options: PassageOptions = DEFAULT_PASSAGE_OPTIONS,
): ExtractedPassage[] {
  return windowLines(lines, options).flatMap((window) => {
    const first = window[0];
    const last = window.at(-1);
    if (!first || !last) return [];
    return [
      {
        content: joinWindow(window),
        locator: { page, line: first.number, line_end: last.number, source: "text" as const },
      },
    ];
  });
}
