import type { ExtractedPassage } from "@locus/contracts";
import { DEFAULT_PASSAGE_OPTIONS, joinWindow, windowLines, type PassageOptions } from "@locus/passages";
import type { SectionedLine } from "./lines.ts";

/**
 * Cuts a text's lines into the passages every extractor indexes (windowLines: up to 5 lines or
 * 500 characters, each starting on the last line of the one before), with `line`..`line_end` and,
 * under a heading, its `section`. A passage never spans two sections, so its section is the one
 * of every line in it.
 */
export function buildTextPassages(
  lines: readonly SectionedLine[],
  options: PassageOptions = DEFAULT_PASSAGE_OPTIONS,
): ExtractedPassage[] {
  const passages: ExtractedPassage[] = [];
  let start = 0;
  while (start < lines.length) {
    const section = lines[start]?.section;
    let end = start + 1;
    while (end < lines.length && lines[end]?.section === section) end += 1;
    for (const window of windowLines(lines.slice(start, end), options)) {
      const first = window[0];
      const last = window.at(-1);
      if (!first || !last) continue;
      passages.push({
        content: joinWindow(window),
        locator: {
          line: first.number,
          line_end: last.number,
          source: "text",
          ...(section && section.length > 0 ? { section: [...section] } : {}),
        },
      });
    }
    start = end;
  }
  return passages;
}
