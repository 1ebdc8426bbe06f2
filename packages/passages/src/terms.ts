import { stemmer } from "stemmer";
import { words, withoutStopWords } from "./words.ts";

/**
 * Terms: words as every keyword index stores and looks them up. One function makes them for
 * SQLite, PostgreSQL and Elasticsearch alike, and for highlighting, so the same query matches the
 * same passages whichever backend holds them; the engines only split the terms on spaces and never
 * stem or fold again.
 *
 * A term is a word of `words()` (NFKC, lower case, a run of letters, marks and digits), with the
 * diacritics of Latin letters dropped ("café" finds "cafe", as the SQLite tokenizer's
 * `remove_diacritics` and Elasticsearch's `asciifolding` did), then, when it is plain letters a-z,
 * stemmed with Porter's algorithm ("revenues" finds "revenue"; "determine" and "deter" stay apart).
 * Numbers and other scripts are kept as they are.
 */

/** Combining marks after a Latin letter: dropped, so "é" (e + U+0301 once decomposed) is "e". */
const LATIN_DIACRITICS = /(?<=\p{Script=Latin})[\u0300-\u036f]+/gu;
const PLAIN = /^[a-z0-9]*$/;
const LATIN = /^[a-z]+$/;

/** A word with the diacritics of its Latin letters dropped; other scripts keep their marks. */
export function foldDiacritics(word: string): string {
  return PLAIN.test(word) ? word : word.normalize("NFD").replace(LATIN_DIACRITICS, "").normalize("NFC");
}

/**
 * A folded word's stem: Porter's algorithm for words of plain letters, the word itself otherwise
 * (numbers, other scripts).
 */
export function stem(word: string): string {
  return LATIN.test(word) ? stemmer(word) : word;
}

/**
 * Words longer than this are not terms: no one searches for them, and engines differ on them
 * (Elasticsearch's whitespace tokenizer cuts tokens at 255 characters, PostgreSQL refuses lexemes
 * over 2 KB), so no index holds them.
 */
export const MAX_TERM_LENGTH = 200;

/**
 * Stems already made: a text's words repeat (Zipf), and a manual of 100,000 words has a few
 * thousand distinct ones, so indexing stems each about once. Emptied when full.
 */
const made = new Map<string, string>();
const MAX_MADE = 50_000;

/** The term a word of `words()` is indexed and searched as. */
export function termOf(word: string): string {
  let term = made.get(word);
  if (term === undefined) {
    term = stem(foldDiacritics(word));
    if (made.size >= MAX_MADE) made.clear();
    made.set(word, term);
  }
  return term;
}

const isTerm = (word: string) => word.length <= MAX_TERM_LENGTH;

/** The terms of a text, in order, repeats kept (each occurrence counts towards BM25's term frequency). */
export function indexTerms(text: string): string[] {
  return words(text).filter(isTerm).map(termOf);
}

/**
 * The distinct terms a query searches for: its first `max` distinct words, stop words dropped
 * unless it has only those (see `withoutStopWords`), as terms. Only letters, marks and digits, so
 * no engine's query syntax is ever reached.
 */
export function queryTerms(text: string, max = 32): string[] {
  const distinct = [...new Set(words(text).filter(isTerm))].slice(0, max);
  return [...new Set(withoutStopWords(distinct).map(termOf))];
}
