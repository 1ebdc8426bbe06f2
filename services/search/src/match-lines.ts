import { boxAround, type Locator, type StoredLocator } from "@locus/contracts";
import { queryTerms, withoutStopWords } from "@locus/search-index";

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * Narrows a passage's line span to the lines where the query's words are, so the locator points at
 * the match and not just at the passage around it. The n-th line of a passage's content is line
 * `line + n` (extractors guarantee it). Words match by their start, to allow for the index's
 * stemming (revenue / revenues); when no line matches that way, the passage's span stays.
 */
export function narrowToMatch(content: string, stored: StoredLocator, query: string): Locator {
  const { line_boxes: lineBoxes, ...locator } = stored;
  if (locator.line === undefined || locator.line_end === undefined) return locator;
  const lines = content.split("\n");
  if (lines.length !== locator.line_end - locator.line + 1) return locator;
  const patterns = withoutStopWords(queryTerms(query)).map(
    (t) => new RegExp(`(?<![\\p{L}\\p{N}])${escape(t.slice(0, Math.max(3, t.length - 2)))}`, "iu"),
  );
  const counts = lines.map((line) => {
    const folded = line.normalize("NFKC");
    return patterns.filter((p) => p.test(folded)).length;
  });
  const best = Math.max(0, ...counts);
  if (best === 0) return locator;
  const first = counts.indexOf(best);
  const last = counts.lastIndexOf(best);
  // OCR passages keep each line's box: the box of the matching lines is where to look.
  const boxes = lineBoxes?.length === lines.length ? lineBoxes.slice(first, last + 1) : [];
  return {
    ...locator,
    line: locator.line + first,
    line_end: locator.line + last,
    ...(boxes.length > 0 ? { bbox: boxAround(boxes) } : {}),
  };
}
