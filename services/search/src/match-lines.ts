import {
  boxAround,
  publicBox,
  publicLocator,
  type HighlightDto,
  type Locator,
  type StoredLocator,
} from "@locus/contracts";
import { matchedWords, toCodePoints, type QueryWords, type TextSpan, type WordAt } from "@locus/passages";

/** Playback starts this long before the first matching word, so its first sound is heard. */
export const LEAD_IN_S = 0.3;

/**
 * The locator of lines `first`..`last` (0-based, inclusive) of a passage's content. The n-th line
 * of a passage's content is line `line + n` (extractors guarantee it); passages that keep each
 * line's box (PDF text, OCR) get the box around those lines. A passage without line numbers (a
 * recording's) keeps its own locator.
 */
export function linesOfPassage(content: string, stored: StoredLocator, first: number, last: number): Locator {
  const locator = publicLocator(stored);
  if (locator.line === undefined || locator.line_end === undefined) return locator;
  const count = lineStarts(content).length;
  if (count !== locator.line_end - locator.line + 1 || first < 0 || last < first || last >= count) {
    return locator;
  }
  const lineBoxes = stored.line_boxes;
  const boxes = lineBoxes?.length === count ? lineBoxes.slice(first, last + 1) : [];
  return {
    ...locator,
    line: locator.line + first,
    line_end: locator.line + last,
    ...(boxes.length > 0 ? { bbox: publicBox(boxAround(boxes)) } : {}),
  };
}

/** Where each line of `content` starts (UTF-16). */
function lineStarts(content: string): number[] {
  const starts = [0];
  for (let i = content.indexOf("\n"); i >= 0; i = content.indexOf("\n", i + 1)) starts.push(i + 1);
  return starts;
}

/** Where each whitespace-separated word of `content` starts (UTF-16). */
function tokenStarts(content: string): number[] {
  return Array.from(content.matchAll(/\S+/g), (m) => m.index);
}

/** The last index whose value is at most `offset` (the unit an offset falls in). */
function unitAt(starts: readonly number[], offset: number): number {
  let unit = 0;
  for (let i = 0; i < starts.length && (starts[i] ?? 0) <= offset; i++) unit = i;
  return unit;
}

/**
 * The locator of the part of a passage that `spans` cover (UTF-16 offsets into its content, in
 * order): the lines they are on (and the box around those lines), or for speech the time from
 * just before the first word to the end of the last. A word hyphenated at a line end and
 * completed from the next line is on both lines. A passage that cannot be narrowed (no word
 * times, lines that do not add up) keeps its own locator.
 */
export function narrowToSpans(content: string, stored: StoredLocator, spans: readonly TextSpan[]): Locator {
  const first = spans[0];
  const last = spans.at(-1);
  if (!first || !last) return publicLocator(stored);
  const times = stored.word_times;
  if (times) {
    const starts = tokenStarts(content);
    const from = times[unitAt(starts, first.start)];
    const to = times[unitAt(starts, Math.max(last.start, last.end - 1))];
    if (starts.length !== times.length || !from || !to) return publicLocator(stored);
    return {
      ...publicLocator(stored),
      timestamp: Math.max(0, Math.round((from[0] - LEAD_IN_S) * 100) / 100),
      timestamp_end: Math.max(from[0], to[1]),
    };
  }
  const lines = lineStarts(content);
  const firstLine = unitAt(lines, first.start);
  let lastLine = unitAt(lines, Math.max(last.start, last.end - 1));
  const lineEnd = (lines[lastLine + 1] ?? content.length + 1) - 1;
  const endsLine = !/[\p{L}\p{N}]/u.test(content.slice(last.end, lineEnd));
  if (endsLine && stored.line_joins?.includes(lastLine)) lastLine += 1;
  return linesOfPassage(content, stored, firstLine, lastLine);
}

/**
 * Of the matches of several query words, the closest run holding the most different ones: for
 * "quick brown fox", the place where all three are said together beats a lone "fox" earlier on.
 */
function bestRun(matches: readonly WordAt[]): WordAt[] {
  let best: WordAt[] = [];
  let bestDistinct = 0;
  let bestWidth = Infinity;
  for (let i = 0; i < matches.length; i++) {
    const seen = new Set<string>();
    for (let j = i; j < matches.length; j++) {
      const a = matches[i];
      const b = matches[j];
      if (!a || !b) continue;
      seen.add(b.stem);
      const width = b.end - a.start;
      if (seen.size > bestDistinct || (seen.size === bestDistinct && width < bestWidth)) {
        best = matches.slice(i, j + 1);
        bestDistinct = seen.size;
        bestWidth = width;
      }
    }
  }
  return best;
}

export interface PlacedMatch {
  locator: Locator;
  /** Every word that matched, in code points of the content. */
  highlights: HighlightDto[];
  /** False when no word of the query is in the passage (found by meaning alone). */
  matched: boolean;
}

/**
 * Where the query's words are in a passage: all of them as highlights, and the locator narrowed
 * to the closest run of the most different ones (lines, a box, or seconds). A passage where none
 * is found keeps its own locator.
 */
export function placeMatch(content: string, stored: StoredLocator, query: QueryWords): PlacedMatch {
  const matches = matchedWords(content, query);
  if (matches.length === 0) return { locator: publicLocator(stored), highlights: [], matched: false };
  return {
    locator: narrowToSpans(content, stored, bestRun(matches)),
    highlights: toCodePoints(content, matches),
    matched: true,
  };
}
