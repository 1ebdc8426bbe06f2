import { mendAcross, words, type Lexicon } from "@locus/passages";

/** A sentence of a passage's content and the content lines (from 0) it spans. */
export interface ContentSentence {
  text: string;
  firstLine: number;
  lastLine: number;
}

const SENTENCES = new Intl.Segmenter("en", { granularity: "sentence" });

/** A line that ends a sentence or a clause that stands alone: . ! ? or : with closing quotes or brackets. */
const ENDS_SENTENCE = /[.!?:]["'”’)\]]*$/;
const STARTS_CAPITALISED = /^["'“‘(]?\p{Lu}/u;

/** A numbered heading: "3.1 Invoking asn1Parser", "2 Introduction". */
const NUMBERED_HEADING = /^\d+(\.\d+)*\.?\s+\S/;
/** An item of a list starts here: a bullet, a dash, or "(a)" / "1." before the words. */
const LIST_ITEM = /^\s*([•◦▪‣*–—-]|\(?[a-z0-9]{1,2}[.)])\s/u;

/**
 * Whether the text breaks after this line although it has no full stop: a heading, a table row or
 * the last item of a list, told by the line being short (under 60% of the longest line around) and
 * the next one starting with a capital, or by the line being a numbered heading, or by the next
 * line starting a list item. Without the break, "Font Matching" would open the first sentence of
 * the paragraph under it.
 */
function standsAlone(line: string, next: string | undefined, longest: number): boolean {
  if (next === undefined || ENDS_SENTENCE.test(line) || /[,;\-–—]$/.test(line)) return false;
  if (LIST_ITEM.test(next)) return true;
  const short = line.length < 0.6 * longest;
  return short && (NUMBERED_HEADING.test(line) || STARTS_CAPITALISED.test(next.trimStart()));
}

/** A sentence that starts by pointing back: "It complements…", "These are designed…", "However, …". */
const REFERS_BACK =
  /^["'“(]?(it|its|this|these|they|their|them|those|such|he|she|his|her|both|however|otherwise|instead|thus|then)\b/i;

/** Whether a sentence (or a line that starts one) points back to the sentence before it. */
export const refersBack = (text: string): boolean => REFERS_BACK.test(text.trim());

/**
 * Whether running text breaks after `line` (followed by `next`): it ends a sentence, or stands
 * alone (see standsAlone). `longest` is the longest line around, in characters. Search reads
 * lines before and after a passage until one breaks, so the sentences it hands over are whole.
 */
export function breaksAfter(line: string, next: string | undefined, longest: number): boolean {
  const trimmed = line.trim();
  return trimmed.length === 0 || ENDS_SENTENCE.test(trimmed) || standsAlone(trimmed, next, longest);
}

/**
 * A passage's sentences, with the lines of the content each one spans. The lines are joined back
 * into running text first: with a space, or with nothing where a word was hyphenated at a line's
 * end ("pat-" / "tern" → "pattern"; a compound such as "well-" / "known" keeps its hyphen, decided
 * by the lexicon as extraction does), and with a sentence break after a line that stands alone
 * (a heading). The text is then cut by the Unicode sentence rules (Intl.Segmenter: "3.5 percent"
 * and "e.g. this" stay whole). A piece of fewer than four words (a page number, a short heading)
 * says too little to quote.
 */
export function sentencesOf(content: string, lexicon?: Lexicon): ContentSentence[] {
  const lines = content.split("\n").map((l) => l.trim());
  const longest = Math.max(1, ...lines.map((l) => l.length));
  // Each line's start in the joined text, and the text itself.
  const starts: number[] = [];
  let joined = "";
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    const next = lines[i + 1];
    starts.push(joined.length);
    const mended = next === undefined ? null : mendAcross(line, next, lexicon);
    if (mended) {
      // The word's rest moves up to this line; the next line keeps its number with what remains.
      joined += mended.head;
      lines[i + 1] = mended.rest;
      joined += " ";
    } else if (standsAlone(line, next, longest)) joined += `${line}\u2029`;
    else joined += `${line} `;
  }
  const lineAt = (offset: number) => {
    let line = 0;
    while (line + 1 < starts.length && (starts[line + 1] ?? Infinity) <= offset) line++;
    return line;
  };
  const out: ContentSentence[] = [];
  for (const { segment, index } of SENTENCES.segment(joined)) {
    // \s covers the paragraph separator that ends a heading (a break the segmenter always makes).
    const text = segment.replace(/\s+/g, " ").trim();
    if (words(text).length < 4) continue;
    const start = index + (segment.length - segment.trimStart().length);
    const end = index + segment.trimEnd().length - 1;
    out.push({ text, firstLine: lineAt(start), lastLine: lineAt(Math.max(start, end)) });
  }
  return out;
}
