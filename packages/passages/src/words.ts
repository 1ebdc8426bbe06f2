/** Letters with their combining marks (Devanagari vowel signs, decomposed accents), and digits. */
export const WORD = /[\p{L}\p{M}\p{N}]+/gu;

/**
 * Words of a text as every index sees them: Unicode-normalised (NFKC: full-width letters,
 * ligatures), lower-cased, runs of letters and digits. Everything else (quotes, operators,
 * brackets, emoji) separates words and never reaches an engine's query syntax. Both indexed text
 * and queries go through this, so a word copied from a passage always finds it.
 */
export function words(text: string): string[] {
  return Array.from(text.normalize("NFKC").toLowerCase().matchAll(WORD), (m) => m[0]);
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
