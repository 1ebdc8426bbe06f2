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

/**
 * What a query's words are matched by in a passage: its terms, as every index searches for them
 * (see `queryTerms`), and the words as typed, reduced only to their singular (`singular`), which
 * are preferred where a passage has both (see `matchedWords`).
 */
export interface QueryWords {
  stems: ReadonlySet<string>;
  typed: ReadonlySet<string>;
}

export function queryWords(query: string, max = 32): QueryWords {
  const stems = new Set(queryTerms(query, max));
  const forms = words(query).map(foldDiacritics);
  return { stems, typed: new Set(forms.filter((form) => stems.has(stem(form))).map(singular)) };
}

/**
 * A word without its plural ending, by Harman's S-stemmer ("queries" → "query", "boxes" → "boxe",
 * "harbours" → "harbour"; "bus" and "glass" stay): a word and its plural are the same word to a
 * reader, where Porter's stems also join words a reader keeps apart.
 */
export function singular(word: string): string {
  if (/[^ae]ies$/.test(word)) return `${word.slice(0, -3)}y`;
  if (/[^aeo]es$/.test(word)) return word.slice(0, -1);
  if (/[^us]s$/.test(word)) return word.slice(0, -1);
  return word;
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
 * The words of `text` that match the query, in order: the words a keyword index matched, since
 * every index searches by the same terms. Where the text has a query word as typed (or its
 * plural or singular), the other words of that stem are left out: Porter's stems join words a
 * reader keeps apart ("respectable" and "respectively" are both "respect"), so a passage with
 * both marks and points at the one asked for. A passage with only the other still marks it: the
 * index found the passage by it.
 */
export function matchedWords(text: string, query: QueryWords): WordAt[] {
  const found = stemMatches(text, query.stems).map((w) => ({
    ...w,
    asTyped: query.typed.has(singular(w.form)),
  }));
  const typedStems = new Set(found.filter((w) => w.asTyped).map((w) => w.stem));
  return found
    .filter((w) => w.asTyped || !typedStems.has(w.stem))
    .map(({ start, end, stem }) => ({ start, end, stem }));
}

/** A matched word with its folded form (before stemming). */
interface FormAt extends WordAt {
  form: string;
}

/**
 * The words of `text` whose stem is one of `stems`, in order. Only words that start like a query
 * stem are stemmed: this runs on every result of every search.
 */
function stemMatches(text: string, stems: ReadonlySet<string>): FormAt[] {
  if (stems.size === 0) return [];
  const starts = new Set([...stems].map(stemStart));
  // Plain ASCII text (most of it) folds by lower-casing once, with the same offsets.
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(text)) return asciiMatches(text.toLowerCase(), starts, stems);
  const found: FormAt[] = [];
  for (const m of text.matchAll(WORD)) {
    const form = foldDiacritics(fold(m[0]));
    if (!starts.has(form.slice(0, 2)) && !starts.has(form.slice(0, 1))) continue;
    const wordStem = stem(form);
    if (stems.has(wordStem)) found.push({ start: m.index, end: m.index + m[0].length, stem: wordStem, form });
  }
  return found;
}

const isAsciiWordChar = (c: number) => (c >= 97 && c <= 122) || (c >= 48 && c <= 57);

/**
 * The words of lower-cased ASCII text whose stem is one of `stems`, found from where their
 * possible starts occur (indexOf) rather than by reading every word: a passage holds a few
 * candidates and hundreds of words.
 */
function asciiMatches(lower: string, starts: ReadonlySet<string>, stems: ReadonlySet<string>): FormAt[] {
  const found = new Map<number, FormAt>();
  for (const start of starts) {
    for (let i = lower.indexOf(start); i >= 0; i = lower.indexOf(start, i + 1)) {
      if (found.has(i) || (i > 0 && isAsciiWordChar(lower.charCodeAt(i - 1)))) continue;
      let end = i;
      while (end < lower.length && isAsciiWordChar(lower.charCodeAt(end))) end++;
      const form = lower.slice(i, end);
      const wordStem = stem(form);
      if (stems.has(wordStem)) found.set(i, { start: i, end, stem: wordStem, form });
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
