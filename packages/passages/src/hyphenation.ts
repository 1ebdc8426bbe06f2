/**
 * English words by how common they are, for telling a word broken at a line end ("deter-" /
 * "mine") from a compound that happens to break at its hyphen ("well-" / "known"). Words are
 * lower-case; hyphenated compounds are words of their own.
 */
export interface Lexicon {
  /** Position in frequency order (0 = most common), or undefined for a word it does not know. */
  rank(word: string): number | undefined;
}

/** A line that may have had the rest of its last word brought up from the next line. */
export interface JoinableLine {
  text: string;
  /**
   * True when the line's last word was hyphenated at the line end and completed from the start
   * of the next line: a match on that word is on both lines.
   */
  continues?: boolean;
}

/** A word broken at the end of a line: letters, then a hyphen (ASCII, soft or Unicode). */
const BROKEN_HEAD = /(\p{L}+)[-\u00AD\u2010]$/u;
/** The hyphens BROKEN_HEAD ends with, as character codes. */
const HYPHENS = new Set([0x2d, 0xad, 0x2010]);
/**
 * The start of the next line that completes it: a word beginning with a small letter (a capital
 * starts a new word, a name or a sentence), with the punctuation stuck to it.
 */
const TAIL = /^(\p{Ll}\p{L}*)([^\s\p{L}\p{N}]*)(?:\s+|$)/u;

/**
 * How to mend a word broken at a line end: "join" drops the hyphen ("deter-" + "mine" →
 * "determine"), "hyphen" keeps it ("well-" + "known" → "well-known"). The form the lexicon finds
 * more common wins; when it knows neither, two whole words make a compound and a fragment is
 * joined. Without a lexicon every break is joined, as most PDF text tools do.
 */
export function mendBrokenWord(head: string, tail: string, lexicon?: Lexicon): "join" | "hyphen" {
  if (!lexicon) return "join";
  const h = head.toLowerCase();
  const t = tail.toLowerCase();
  const joined = lexicon.rank(h + t);
  const compound = lexicon.rank(`${h}-${t}`);
  if (joined !== undefined && (compound === undefined || joined <= compound)) return "join";
  if (compound !== undefined) return "hyphen";
  return lexicon.rank(h) !== undefined && lexicon.rank(t) !== undefined ? "hyphen" : "join";
}

/**
 * Mends words hyphenated at line ends: the rest of the word (and the punctuation stuck to it)
 * moves up from the start of the next line, so the word is whole where it begins, in the
 * indexed text and in what a result shows. The line is marked `continues`. Line numbers and
 * every other field of a line stay as they were; a line left empty stays, empty, in its place.
 * Returns new line objects; the input is not changed.
 */
export function joinHyphenatedLines<L extends JoinableLine>(lines: readonly L[], lexicon?: Lexicon): L[] {
  const out = lines.map((line) => ({ ...line }));
  for (let i = 0; i + 1 < out.length; i++) {
    const line = out[i];
    const next = out[i + 1];
    if (!line || !next) continue;
    const mended = mendAcross(line.text, next.text, lexicon);
    if (!mended) continue;
    line.text = mended.head;
    line.continues = true;
    next.text = mended.rest;
  }
  return out;
}

/**
 * One break mended: `head` is the first line with the whole word, `rest` what remains of the
 * second. Null when the first line does not end in a broken word or the second does not go on
 * with one.
 */
export function mendAcross(
  first: string,
  second: string,
  lexicon?: Lexicon,
): { head: string; rest: string } | null {
  // Most lines end otherwise: they are let go before any regular expression runs (a PDF's
  // thousands of lines each pass here).
  if (!HYPHENS.has(first.charCodeAt(first.length - 1))) return null;
  const broken = BROKEN_HEAD.exec(first);
  if (!broken) return null;
  const tail = TAIL.exec(second.trimStart());
  if (!tail) return null;
  const [, headWord = ""] = broken;
  const [whole = "", tailWord = "", punctuation = ""] = tail;
  const keep = mendBrokenWord(headWord, tailWord, lexicon) === "hyphen";
  const stem = first.slice(0, first.length - 1);
  return {
    head: `${stem}${keep ? "-" : ""}${tailWord}${punctuation}`,
    rest: second.trimStart().slice(whole.length).trim(),
  };
}
