export {
  windowLines,
  windowJoins,
  joinWindow,
  DEFAULT_PASSAGE_OPTIONS,
  type NumberedLine,
  type PassageOptions,
} from "./windows.ts";
export { words, withoutStopWords, isStopWord } from "./words.ts";
export { foldDiacritics, indexTerms, MAX_TERM_LENGTH, queryTerms, stem, termOf } from "./terms.ts";
export {
  joinHyphenatedLines,
  mendAcross,
  mendBrokenWord,
  type JoinableLine,
  type Lexicon,
} from "./hyphenation.ts";
export {
  matchedWords,
  queryWords,
  singular,
  type QueryWords,
  sentenceSpans,
  toCodePoints,
  wordsAt,
  type TextSpan,
  type WordAt,
} from "./matching.ts";
