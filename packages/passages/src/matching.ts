import { stemmer } from "stemmer";
import { WORD, withoutStopWords, words } from "./words.ts";

/** A stretch of a text, in UTF-16 code units (JavaScript string indices), end exclusive. */
export interface TextSpan {
  start: number;
  end: number;
}

/** A word of a text where it stands, with the stem it is matched by. */
export interface WordAt extends TextSpan {
  stem: string;
}

const LATIN = /^[a-z]+$/;

/**
 * A word's stem as the keyword indexes compare words: Porter's algorithm (the one SQLite's
 * `porter` tokenizer runs) for words of plain letters, the word itself otherwise (numbers,
 * other scripts). "revenues" and "revenue" share a stem; "determine" and "deter" do not.
 */
export function stem(word: string): string {
  return LATIN.test(word) ? stemmer(word) : word;
}

/** The stems a query is matched by: its words without stop words (unless it has only those). */
export function queryStems(query: string, max = 32): Set<string> {
  return new Set(withoutStopWords([...new Set(words(query))].slice(0, max)).map(stem));
}

/** Every word of `text` with its place and stem, folded as `words()` folds them. */
export function wordsAt(text: string): WordAt[] {
  return Array.from(text.matchAll(WORD), (m) => {
    const [folded = ""] = words(m[0]);
    return { start: m.index, end: m.index + m[0].length, stem: stem(folded) };
  });
}

/**
 * The words of `text` that match the query's stems, in order. When none does, the looser rule
 * search used before stems (a word starting with most of a query word) is tried, so an index
 * that stems differently (PostgreSQL's snowball) still gets its matches shown.
 */
export function matchedWords(text: string, stems: ReadonlySet<string>): WordAt[] {
  const all = wordsAt(text);
  const exact = all.filter((w) => stems.has(w.stem));
  if (exact.length > 0 || stems.size === 0) return exact;
  const prefixes = [...stems].map((s) => s.slice(0, Math.max(3, s.length - 2)));
  return all.filter((w) => {
    const [folded = ""] = words(text.slice(w.start, w.end));
    return prefixes.some((p) => folded.startsWith(p));
  });
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
