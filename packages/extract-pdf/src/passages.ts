import type { ExtractedPassage } from "@locus/contracts";
import type { TextLine } from "./lines.ts";

export interface PassageOptions {
  /** Most lines in one passage. */
  maxLines: number;
  /** Most characters in one passage (a single longer line is cut into pieces). */
  maxChars: number;
}

export const DEFAULT_PASSAGE_OPTIONS: PassageOptions = { maxLines: 5, maxChars: 500 };

/**
 * Cuts a page's lines into short passages of consecutive lines. Each passage after the first
 * starts on the last line of the one before, so a phrase broken across two lines is whole in at
 * least one passage.
 */
export function buildPassages(
  page: number,
  lines: readonly TextLine[],
  options: PassageOptions = DEFAULT_PASSAGE_OPTIONS,
): ExtractedPassage[] {
  const passages: ExtractedPassage[] = [];
  const pieces = lines.flatMap((line) => splitLongLine(line, options.maxChars));
  let start = 0;
  while (start < pieces.length) {
    let end = start;
    let chars = pieces[start]?.text.length ?? 0;
    while (end + 1 < pieces.length && end + 1 - start < options.maxLines) {
      const next = pieces[end + 1];
      if (!next || chars + 1 + next.text.length > options.maxChars) break;
      chars += 1 + next.text.length;
      end += 1;
    }
    const window = pieces.slice(start, end + 1);
    const first = window[0];
    const last = window.at(-1);
    if (!first || !last) break;
    passages.push({
      // One content line per page line (pieces of one long line rejoin with a space), so the
      // n-th line of the content is page line `line + n`: search relies on that to point at the match.
      content: window
        .map((l, i) => (i > 0 && window[i - 1]?.number === l.number ? " " : i > 0 ? "\n" : "") + l.text)
        .join(""),
      locator: { page, line: first.number, line_end: last.number, source: "text" },
    });
    if (end + 1 >= pieces.length) break;
    start = end > start ? end : end + 1;
  }
  return passages;
}

function splitLongLine(line: TextLine, maxChars: number): TextLine[] {
  if (line.text.length <= maxChars) return [line];
  const parts: TextLine[] = [];
  let rest = line.text;
  while (rest.length > maxChars) {
    // Cut at the last space before the limit when there is one.
    const space = rest.lastIndexOf(" ", maxChars);
    const cut = space > maxChars / 2 ? space : maxChars;
    parts.push({ text: rest.slice(0, cut).trim(), number: line.number });
    rest = rest.slice(cut).trim();
  }
  if (rest.length > 0) parts.push({ text: rest, number: line.number });
  return parts;
}
