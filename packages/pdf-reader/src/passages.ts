import { boxAround, type BoundingBox, type ExtractedPassage } from "@locus/contracts";
import {
  DEFAULT_PASSAGE_OPTIONS,
  joinWindow,
  windowJoins,
  windowLines,
  type PassageOptions,
} from "@locus/passages";
import type { TextLine } from "./lines.ts";

export { DEFAULT_PASSAGE_OPTIONS, type PassageOptions };

/**
 * Cuts a page's text-layer lines into short overlapping passages with page and line locators,
 * the box around their lines (PDF points from the page's top-left corner) and each line's box,
 * so that search can narrow the box with the lines it points at.
 */
export function buildPassages(
  page: number,
  lines: readonly TextLine[],
  options: PassageOptions = DEFAULT_PASSAGE_OPTIONS,
): ExtractedPassage[] {
  return windowLines(lines, options).flatMap((window) => {
    const first = window[0];
    const last = window.at(-1);
    if (!first || !last) return [];
    // One box per page line (a long line cut into pieces is still one line of the content).
    const lineBoxes = window
      .filter((l, i) => window[i - 1]?.number !== l.number)
      .map((l) => l.bbox)
      .filter((b): b is BoundingBox => b !== undefined);
    const lineCount = last.number - first.number + 1;
    const joins = windowJoins(window);
    return [
      {
        content: joinWindow(window),
        locator: {
          page,
          line: first.number,
          line_end: last.number,
          source: "text" as const,
          ...(lineBoxes.length === lineCount ? { bbox: boxAround(lineBoxes), line_boxes: lineBoxes } : {}),
          ...(joins ? { line_joins: joins } : {}),
        },
      },
    ];
  });
}
