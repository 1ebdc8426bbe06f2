/** A line of text and its 1-based number on its page (or image). */
export interface NumberedLine {
  text: string;
  number: number;
  /** The line's last word was hyphenated and completed from the next line (see joinHyphenatedLines). */
  continues?: boolean;
}

export interface PassageOptions {
  /** Most lines in one passage. */
  maxLines: number;
  /** Most characters in one passage (a single longer line is cut into pieces). */
  maxChars: number;
}

export const DEFAULT_PASSAGE_OPTIONS: PassageOptions = { maxLines: 5, maxChars: 500 };

/**
 * Cuts a page's lines into windows of consecutive lines, the passages every extractor indexes.
 * Each window after the first starts on the last line of the one before, so a phrase broken across
 * two lines is whole in at least one passage. A line longer than `maxChars` is cut into pieces that
 * keep its number (and every other field of the line).
 */
export function windowLines<L extends NumberedLine>(
  lines: readonly L[],
  options: PassageOptions = DEFAULT_PASSAGE_OPTIONS,
): L[][] {
  const windows: L[][] = [];
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
    windows.push(pieces.slice(start, end + 1));
    if (end + 1 >= pieces.length) break;
    start = end > start ? end : end + 1;
  }
  return windows;
}

/**
 * A window's text: one content line per page line (pieces of one long line rejoin with a space),
 * so the n-th line of the content is page line `first + n`; search relies on that to point at the
 * match.
 */
export function joinWindow(window: readonly NumberedLine[]): string {
  return window
    .map((l, i) => (i > 0 && window[i - 1]?.number === l.number ? " " : i > 0 ? "\n" : "") + l.text)
    .join("");
}

/**
 * The content lines of a window (from 0) whose last word goes on to the next content line of the
 * same window: a locator's `line_joins`. Undefined when there are none, to keep locators small.
 */
export function windowJoins(window: readonly NumberedLine[]): number[] | undefined {
  const joins: number[] = [];
  let contentLine = -1;
  window.forEach((line, i) => {
    if (window[i - 1]?.number !== line.number) contentLine += 1;
    const next = window[i + 1];
    // Pieces of one long line keep its fields: only its last piece ends the line.
    if (line.continues && next && next.number !== line.number) joins.push(contentLine);
  });
  return joins.length > 0 ? joins : undefined;
}

function splitLongLine<L extends NumberedLine>(line: L, maxChars: number): L[] {
  if (line.text.length <= maxChars) return [line];
  const parts: L[] = [];
  let rest = line.text;
  while (rest.length > maxChars) {
    // Cut at the last space before the limit when there is one.
    const space = rest.lastIndexOf(" ", maxChars);
    const cut = space > maxChars / 2 ? space : maxChars;
    parts.push({ ...line, text: rest.slice(0, cut).trim() });
    rest = rest.slice(cut).trim();
  }
  if (rest.length > 0) parts.push({ ...line, text: rest });
  return parts;
}
