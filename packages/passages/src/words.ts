/** Letters with their combining marks (Devanagari vowel signs, decomposed accents), and digits. */
export const WORD = /[\p{L}\p{M}\p{N}]+/gu;
/**
 * The same words in text that is all ASCII (most of what is indexed): NFKC leaves ASCII as it is,
 * and its letters and digits are the only ones. Three times faster than WORD, whose Unicode
 * classes cost every character a table lookup.
 */
const ASCII_WORD = /[a-z0-9]+/g;
// eslint-disable-next-line no-control-regex -- every ASCII character, controls included
const ASCII = /^[\x00-\x7f]*$/;

/**
 * Words of a text as every index sees them: Unicode-normalised (NFKC: full-width letters,
 * ligatures), lower-cased, runs of letters and digits. Everything else (quotes, operators,
 * brackets, emoji) separates words and never reaches an engine's query syntax. Both indexed text
 * and queries go through this, so a word copied from a passage always finds it.
 */
export function words(text: string): string[] {
  if (ASCII.test(text)) return text.toLowerCase().match(ASCII_WORD) ?? [];
  return text.normalize("NFKC").toLowerCase().match(WORD) ?? [];
}

/**
 * Words so common in English that they tell passages apart hardly at all (BM25 gives them almost
 * no weight) yet match most passages, which makes ranking them slow. A query drops them when it
 * has other words; a query made only of them keeps them.
 */
const STOP_WORDS = new Set(
  (
    "a about after all also an and any are as at be been but by can could did do does for from had has have " +
    "he her his i if in into is it its may more most no not of on or our out over she so some such than that " +
    "the their them then there these they this those to under up was we were what when which while who will " +
    "with would you your"
  ).split(" "),
);

export function withoutStopWords(terms: readonly string[]): string[] {
  const kept = terms.filter((t) => !STOP_WORDS.has(t));
  return kept.length > 0 ? kept : [...terms];
}

export const isStopWord = (word: string): boolean => STOP_WORDS.has(word);
