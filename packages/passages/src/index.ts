export {
  windowLines,
  joinWindow,
  DEFAULT_PASSAGE_OPTIONS,
  type NumberedLine,
  type PassageOptions,
} from "./windows.ts";
export { words, withoutStopWords, isStopWord } from "./words.ts";
