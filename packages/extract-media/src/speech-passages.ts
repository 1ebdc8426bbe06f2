import type { ExtractedPassage } from "@locus/contracts";

/** A stretch of recognised speech, in seconds from the start of the recording. */
export interface TimedText {
  text: string;
  start: number;
  end: number;
  /** 0–1, when the recogniser says. */
  confidence?: number;
  /** Word by word, when the recogniser gives word times: long stretches are cut between words. */
  words?: { word: string; start: number; end: number }[];
}

export interface SpeechPassageOptions {
  /** Most characters in a passage: a sentence or a few. */
  maxChars: number;
}

export const DEFAULT_SPEECH_PASSAGE_OPTIONS: SpeechPassageOptions = { maxChars: 300 };

const seconds = (s: number) => Math.round(s * 100) / 100;

/** Cuts a stretch longer than `maxChars` between words, each piece with its own times. */
function splitLong(segment: TimedText, maxChars: number): TimedText[] {
  if (segment.text.length <= maxChars || !segment.words || segment.words.length < 2) return [segment];
  const pieces: TimedText[] = [];
  let words: NonNullable<TimedText["words"]> = [];
  let chars = 0;
  const flush = () => {
    const first = words[0];
    const last = words.at(-1);
    if (!first || !last) return;
    pieces.push({
      text: words.map((w) => w.word).join(" "),
      start: first.start,
      end: last.end,
      ...(segment.confidence === undefined ? {} : { confidence: segment.confidence }),
      words,
    });
    words = [];
    chars = 0;
  };
  for (const w of segment.words) {
    if (chars > 0 && chars + 1 + w.word.length > maxChars) flush();
    words.push(w);
    chars += (chars > 0 ? 1 : 0) + w.word.length;
  }
  flush();
  return pieces;
}

/**
 * Groups recognised speech into passages of a sentence or a few (up to `maxChars`), in order, each
 * with `timestamp` and `timestamp_end` in seconds and `source: "speech"`.
 */
export function speechPassages(
  segments: readonly TimedText[],
  options: SpeechPassageOptions = DEFAULT_SPEECH_PASSAGE_OPTIONS,
): ExtractedPassage[] {
  const pieces = segments
    .map((s) => ({ ...s, text: s.text.replace(/\s+/g, " ").trim() }))
    .filter((s) => s.text.length > 0)
    .flatMap((s) => splitLong(s, options.maxChars));
  const passages: ExtractedPassage[] = [];
  let group: TimedText[] = [];
  const flush = () => {
    const first = group[0];
    const last = group.at(-1);
    if (!first || !last) return;
    const sure = group.filter((g) => g.confidence !== undefined);
    const confidence =
      sure.length > 0 ? sure.reduce((sum, g) => sum + (g.confidence ?? 0), 0) / sure.length : undefined;
    passages.push({
      content: group.map((g) => g.text).join(" "),
      locator: {
        timestamp: seconds(first.start),
        timestamp_end: seconds(Math.max(last.end, first.start)),
        source: "speech",
        ...(confidence === undefined ? {} : { confidence: Math.round(confidence * 100) / 100 }),
      },
    });
    group = [];
  };
  let chars = 0;
  for (const piece of pieces) {
    if (group.length > 0 && chars + 1 + piece.text.length > options.maxChars) {
      flush();
      chars = 0;
    }
    group.push(piece);
    chars += (chars > 0 ? 1 : 0) + piece.text.length;
  }
  flush();
  return passages;
}
