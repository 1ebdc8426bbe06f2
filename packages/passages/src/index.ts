export {
  windowLines,
  joinWindow,
  DEFAULT_PASSAGE_OPTIONS,
  type NumberedLine,
  type PassageOptions,
} from "./windows.ts";
