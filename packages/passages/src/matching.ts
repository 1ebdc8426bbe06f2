import { foldDiacritics, queryTerms, stem, termOf } from "./terms.ts";
import { WORD, words } from "./words.ts";

/** A stretch of a text, in UTF-16 code units (JavaScript string indices), end exclusive. */
export interface TextSpan {
  start: number;
  end: number;
}

/** A word of a text where it stands, with the stem (its term, see terms.ts) it is matched by. */
export interface WordAt extends TextSpan {
  stem: string;
}

/** The stems a query is matched by: its terms, as every index searches for them (see `queryTerms`). */
export function queryStems(query: string, max = 32): Set<string> {
  return new Set(queryTerms(query, max));
}

/** A word as the indexes fold it: NFKC and lower case (plain ASCII needs only the latter). */
function fold(word: string): string {
  // eslint-disable-next-line no-control-regex
  return /^[\x00-\x7f]*$/.test(word) ? word.toLowerCase() : (words(word)[0] ?? "");
}

/** Every word of `text` with its place and stem, folded as `words()` folds them. */
export function wordsAt(text: string): WordAt[] {
  return Array.from(text.matchAll(WORD), (m) => ({
    start: m.index,
    end: m.index + m[0].length,
    stem: termOf(fold(m[0])),
  }));
}

/**
 * The start a word must have to share a stem: Porter's algorithm rewrites only endings, so a
 * word and its stem agree on their first two letters (one, for stems that short).
 */
const stemStart = (s: string) => s.slice(0, Math.min(2, Math.max(1, s.length - 1)));

/**
 * The words of `text` that match the query's stems, in order: the words a keyword index matched,
 * since every index searches by the same terms. Only words that start like a query stem are
 * stemmed: this runs on every result of every search.
 */
export function matchedWords(text: string, stems: ReadonlySet<string>): WordAt[] {
  if (stems.size === 0) return [];
  const starts = new Set([...stems].map(stemStart));
  // Plain ASCII text (most of it) folds by lower-casing once, with the same offsets.
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(text)) return asciiMatches(text.toLowerCase(), starts, stems);
  const found: WordAt[] = [];
  for (const m of text.matchAll(WORD)) {
    const folded = foldDiacritics(fold(m[0]));
    if (!starts.has(folded.slice(0, 2)) && !starts.has(folded.slice(0, 1))) continue;
    const wordStem = stem(folded);
    if (stems.has(wordStem)) found.push({ start: m.index, end: m.index + m[0].length, stem: wordStem });
  }
  return found;
}

const isAsciiWordChar = (c: number) => (c >= 97 && c <= 122) || (c >= 48 && c <= 57);

/**
 * The words of lower-cased ASCII text whose stem is one of `stems`, found from where their
 * possible starts occur (indexOf) rather than by reading every word: a passage holds a few
 * candidates and hundreds of words.
 */
function asciiMatches(lower: string, starts: ReadonlySet<string>, stems: ReadonlySet<string>): WordAt[] {
  const found = new Map<number, WordAt>();
  for (const start of starts) {
    for (let i = lower.indexOf(start); i >= 0; i = lower.indexOf(start, i + 1)) {
      if (found.has(i) || (i > 0 && isAsciiWordChar(lower.charCodeAt(i - 1)))) continue;
      let end = i;
      while (end < lower.length && isAsciiWordChar(lower.charCodeAt(end))) end++;
      const wordStem = stem(lower.slice(i, end));
      if (stems.has(wordStem)) found.set(i, { start: i, end, stem: wordStem });
    }
  }
  return [...found.values()].sort((a, b) => a.start - b.start);
}

/**
 * Spans from UTF-16 indices to Unicode code points, the unit the API states offsets in: what a
 * Python string indexes by, and what `Array.from(text)` indexes in JavaScript.
 */
export function toCodePoints(text: string, spans: readonly TextSpan[]): TextSpan[] {
  if (!/[\uD800-\uDBFF]/.test(text)) return spans.map(({ start, end }) => ({ start, end }));
  const points = (units: number) => Array.from(text.slice(0, units)).length;
  return spans.map(({ start, end }) => ({ start: points(start), end: points(end) }));
}

/** Sentences end at . ! or ? followed by a space or the end; a line break alone does not end one. */
const SENTENCE_END = /[.!?]["')\]]*(?=\s|$)/g;

/**
 * The sentences of a passage's text, as spans (UTF-16): cut after sentence punctuation, and a
 * stretch of more than `maxWords` words without any is cut every `maxWords` words (speech from
 * a recogniser has no punctuation at all).
 */
export function sentenceSpans(text: string, maxWords = 25): TextSpan[] {
  const ends = Array.from(text.matchAll(SENTENCE_END), (m) => m.index + m[0].length);
  const spans: TextSpan[] = [];
  let start = 0;
  for (const end of [...ends, text.length]) {
    if (end <= start) continue;
    spans.push(...cutLong({ start, end }, text, maxWords));
    start = end;
  }
  return spans
    .map((s) => trim(text, s))
    .filter((s) => s.end > s.start && /[\p{L}\p{N}]/u.test(text.slice(s.start, s.end)));
}

function cutLong(span: TextSpan, text: string, maxWords: number): TextSpan[] {
  const inside = wordsAt(text.slice(span.start, span.end));
  if (inside.length <= maxWords) return [span];
  const pieces: TextSpan[] = [];
  for (let i = 0; i < inside.length; i += maxWords) {
    const first = inside[i];
    const next = inside[i + maxWords];
    if (!first) break;
    pieces.push({
      start: span.start + (i === 0 ? 0 : first.start),
      end: next ? span.start + next.start : span.end,
    });
  }
  return pieces;
}

function trim(text: string, span: TextSpan): TextSpan {
  let { start, end } = span;
  while (start < end && /\s/.test(text[start] ?? "")) start++;
  while (end > start && /\s/.test(text[end - 1] ?? "")) end--;
  return { start, end };
}
