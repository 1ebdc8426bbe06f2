import { boxAround, type Locator, type StoredLocator } from "@locus/contracts";
import { queryTerms, withoutStopWords } from "@locus/search-index";

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** A stored locator as the API shows it: without the per-line boxes kept for narrowing. */
export function publicLocator(stored: StoredLocator): Locator {
  const { line_boxes: _lineBoxes, ...locator } = stored;
  return locator;
}

/**
 * The locator of lines `first`..`last` (0-based, inclusive) of a passage's content. The n-th line
 * of a passage's content is line `line + n` (extractors guarantee it); OCR passages keep each
 * line's box, and the box around those lines is where to look. A passage without line numbers
 * (a recording's) keeps its own locator.
 */
export function linesOfPassage(content: string, stored: StoredLocator, first: number, last: number): Locator {
  const locator = publicLocator(stored);
  if (locator.line === undefined || locator.line_end === undefined) return locator;
  const count = content.split("\n").length;
  if (count !== locator.line_end - locator.line + 1 || first < 0 || last < first || last >= count) {
    return locator;
  }
  const lineBoxes = stored.line_boxes;
  const boxes = lineBoxes?.length === count ? lineBoxes.slice(first, last + 1) : [];
  return {
    ...locator,
    line: locator.line + first,
    line_end: locator.line + last,
    ...(boxes.length > 0 ? { bbox: boxAround(boxes) } : {}),
  };
}

/**
 * Narrows a passage's line span to the lines where the query's words are, so the locator points at
 * the match and not just at the passage around it. Words match by their start, to allow for the
 * index's stemming (revenue / revenues); when no line matches that way, the passage's span stays.
 */
export function narrowToMatch(content: string, stored: StoredLocator, query: string): Locator {
  const lines = content.split("\n");
  const patterns = withoutStopWords(queryTerms(query)).map(
    (t) => new RegExp(`(?<![\\p{L}\\p{N}])${escape(t.slice(0, Math.max(3, t.length - 2)))}`, "iu"),
  );
  const counts = lines.map((line) => {
    const folded = line.normalize("NFKC");
    return patterns.filter((p) => p.test(folded)).length;
  });
  const best = Math.max(0, ...counts);
  if (best === 0) return publicLocator(stored);
  return linesOfPassage(content, stored, counts.indexOf(best), counts.lastIndexOf(best));
}
