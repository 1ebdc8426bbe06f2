import type { BoundingBox, StoredLocator } from "@locus/contracts";
import type { PassageHit, SearchIndex } from "@locus/search-index";
import { breaksAfter, refersBack } from "@locus/summarizer";

/** A passage's text and stored locator: a result as found, or widened to whole sentences. */
export interface PassageText {
  content: string;
  stored: StoredLocator;
}

/** Most lines read before or after a passage to finish its first or last sentence. */
const MAX_EXTRA_LINES = 3;

/** What a page's lines hold, gathered from the passages around a hit (windows share lines). */
interface PageLines {
  text: Map<number, string>;
  boxes: Map<number, BoundingBox>;
  /** Page lines whose last word goes on to the next line (see StoredLocator.line_joins). */
  joins: Set<number>;
}

/**
 * Widens each passage of a page (PDF text, OCR) to whole sentences: a passage is a window of lines,
 * so it often starts or ends mid-sentence ("with two binary incompatible versions of the…"). The
 * passages just before and after it in its file (by `ord`, one read of the index for all of them)
 * give the lines around it on the same page; lines are added before the first until the line
 * before ends a sentence, and after the last until it ends one, at most MAX_EXTRA_LINES each way.
 * A first sentence that points back ("These are designed…") brings the sentence before it too.
 * The widened passage keeps the stored locator's shape (lines, their boxes, hyphenation joins), so
 * a citation of any of its sentences narrows to that sentence's lines. Recordings' passages are
 * cut at pauses already and stay as they are, as does any passage whose neighbours cannot be read.
 */
export async function wholeSentences(
  index: SearchIndex,
  userId: string,
  hits: readonly PassageHit[],
): Promise<PassageText[]> {
  const asFound = hits.map((h) => ({ content: h.content, stored: h.locator }));
  const widenable = hits.filter(hasLines);
  if (widenable.length === 0) return asFound;
  const around = await index.passagesInRanges({
    userId,
    ranges: widenable.map((h) => ({ fileId: h.fileId, from: h.ord - 1, to: h.ord + 1 })),
  });
  const byPlace = new Map(around.map((h) => [`${h.fileId}:${h.ord}`, h]));
  return hits.map((hit, i) => {
    if (!hasLines(hit)) return asFound[i] as PassageText;
    const neighbours = [hit.ord - 1, hit.ord, hit.ord + 1].flatMap((ord) => {
      const found = ord === hit.ord ? hit : byPlace.get(`${hit.fileId}:${ord}`);
      return found && found.locator.page === hit.locator.page ? [found] : [];
    });
    return widen(hit, pageLines(neighbours));
  });
}

/** A passage of numbered lines on a page, whose content has one line per page line. */
function hasLines(hit: PassageHit): boolean {
  const { page, line, line_end } = hit.locator;
  return (
    page !== undefined &&
    line !== undefined &&
    line_end !== undefined &&
    hit.content.split("\n").length === line_end - line + 1
  );
}

function pageLines(passages: readonly PassageHit[]): PageLines {
  const lines: PageLines = { text: new Map(), boxes: new Map(), joins: new Set() };
  for (const p of passages) {
    if (!hasLines(p)) continue;
    const first = p.locator.line ?? 0;
    const contentLines = p.content.split("\n");
    contentLines.forEach((text, i) => {
      lines.text.set(first + i, text);
      const box = p.locator.line_boxes?.[i];
      if (box && p.locator.line_boxes?.length === contentLines.length) lines.boxes.set(first + i, box);
    });
    for (const j of p.locator.line_joins ?? []) lines.joins.add(first + j);
  }
  return lines;
}

function widen(hit: PassageHit, lines: PageLines): PassageText {
  const { line = 0, line_end: lineEnd = line } = hit.locator;
  const longest = Math.max(1, ...[...lines.text.values()].map((t) => t.trim().length));
  const textOf = (n: number) => lines.text.get(n);
  let first = line;
  let pointsBack = false;
  while (first > line - MAX_EXTRA_LINES) {
    const before = textOf(first - 1);
    if (before === undefined) break;
    if (breaksAfter(before, textOf(first), longest)) {
      // "These are designed for…" needs the sentence before it: read on back to where that starts.
      if (pointsBack || !refersBack(textOf(first) ?? "")) break;
      pointsBack = true;
    }
    first -= 1;
  }
  let last = lineEnd;
  while (last < lineEnd + MAX_EXTRA_LINES) {
    const after = textOf(last + 1);
    if (after === undefined || breaksAfter(textOf(last) ?? "", after, longest)) break;
    last += 1;
  }
  if (first === line && last === lineEnd) return { content: hit.content, stored: hit.locator };

  const numbers = Array.from({ length: last - first + 1 }, (_, i) => first + i);
  const boxes = numbers.map((n) => lines.boxes.get(n));
  const joins = numbers.flatMap((n, i) => (lines.joins.has(n) && n < last ? [i] : []));
  const { line_boxes: _boxes, line_joins: _joins, ...rest } = hit.locator;
  const stored: StoredLocator = {
    ...rest,
    line: first,
    line_end: last,
    ...(boxes.every((b) => b !== undefined) ? { line_boxes: boxes } : {}),
    ...(joins.length > 0 ? { line_joins: joins } : {}),
  };
  return { content: numbers.map((n) => textOf(n) ?? "").join("\n"), stored };
}
