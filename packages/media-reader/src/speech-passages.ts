import type { ExtractedPassage } from "@locus/contracts";

/** A stretch of recognised speech, in seconds from the start of the recording. */
export interface TimedText {
  text: string;
  start: number;
  end: number;
  /** 0–1, when the recogniser says. */
  confidence?: number;
  /** Word by word, when the recogniser gives word times. */
  words?: { word: string; start: number; end: number }[];
}

export interface SpeechPassageOptions {
  /** Most characters in a passage: a sentence or two. */
  maxChars: number;
  /** Longest a passage may last, in seconds. */
  maxSeconds: number;
  /**
   * Seconds of speech at the end of a passage that the next one starts with (at least two
   * words), so that a phrase said across the cut is whole in one of them.
   */
  overlapSeconds: number;
}

export const DEFAULT_SPEECH_PASSAGE_OPTIONS: SpeechPassageOptions = {
  maxChars: 200,
  maxSeconds: 15,
  overlapSeconds: 2.5,
};

/** One word as passages keep it: its times, and what follows it. */
interface TimedWord {
  word: string;
  start: number;
  end: number;
  confidence?: number;
  /** The recogniser ended a stretch after this word: a pause, a good place to cut. */
  endsStretch: boolean;
}

const seconds = (s: number) => Math.round(s * 100) / 100;

/**
 * The words of a stretch with their times. A recogniser that gives no word times (a transcription
 * server's segments) gives every word of the stretch the stretch's times: a match narrows no
 * further than its stretch, which is the truth of what is known.
 */
function timedWords(stretch: TimedText): TimedWord[] {
  const confidence = stretch.confidence === undefined ? {} : { confidence: stretch.confidence };
  const given = stretch.words?.filter((w) => w.word.trim().length > 0);
  const words =
    given && given.length > 0
      ? given.map((w) => ({ word: w.word.trim(), start: w.start, end: Math.max(w.start, w.end) }))
      : stretch.text
          .split(/\s+/)
          .filter((w) => w.length > 0)
          .map((word) => ({ word, start: stretch.start, end: Math.max(stretch.start, stretch.end) }));
  return words.map((w, i) => ({ ...w, ...confidence, endsStretch: i === words.length - 1 }));
}

/**
 * Groups recognised speech into passages of a sentence or two (at most `maxChars` and
 * `maxSeconds`), cut where the speaker pauses when a pause is near, each starting with the last
 * couple of seconds of the one before. A passage keeps the start and end of each of its words
 * (`word_times`), so that search can point at the words that match; its `timestamp` and
 * `timestamp_end` are its first word's start and last word's end.
 *
 * Fed a recording's chunks in order (`add`), it gives passages as they are complete; `finish`
 * gives the rest. Overlap carries across chunks, so a phrase cut by a chunk boundary stays whole.
 */
export class SpeechPassages {
  private pending: TimedWord[] = [];
  /** How many words at the head of `pending` the last passage already had. */
  private carried = 0;

  constructor(private readonly options: SpeechPassageOptions = DEFAULT_SPEECH_PASSAGE_OPTIONS) {}

  /** Takes the next stretches of speech (in order); returns the passages they complete. */
  add(stretches: readonly TimedText[]): ExtractedPassage[] {
    for (const stretch of stretches) this.pending.push(...timedWords(stretch));
    const passages: ExtractedPassage[] = [];
    for (let cut = this.fullCut(); cut !== null; cut = this.fullCut()) passages.push(this.emit(cut));
    return passages;
  }

  /** The passages of what is left. */
  finish(): ExtractedPassage[] {
    const passages: ExtractedPassage[] = [];
    for (let cut = this.fullCut(); cut !== null; cut = this.fullCut()) passages.push(this.emit(cut));
    if (this.pending.length > this.carried) passages.push(this.emit(this.pending.length));
    this.pending = [];
    this.carried = 0;
    return passages;
  }

  /**
   * Where to end the next passage, when `pending` already holds more than one passage can take:
   * at the longest pause in its second half (a later one when pauses tie), else as late as fits.
   */
  private fullCut(): number | null {
    const { maxChars, maxSeconds } = this.options;
    const words = this.pending;
    let fits = 0;
    let chars = -1;
    for (const w of words) {
      const first = words[0];
      chars += 1 + w.word.length;
      if (fits > 0 && (chars > maxChars || (first && w.end - first.start > maxSeconds))) break;
      fits += 1;
    }
    if (fits === words.length) return null;
    // Never end a passage inside what the last one carried over: each must bring new words.
    const earliest = Math.max(this.carried + 1, Math.ceil(fits / 2));
    // (Carried-over words too long to leave room: the passage runs past the limit by new words.)
    let best = Math.max(fits, Math.min(words.length, this.carried + 1));
    let bestPause = -1;
    for (let end = fits; end >= earliest; end--) {
      const last = words[end - 1];
      const next = words[end];
      if (!last || !next) continue;
      const pause = next.start - last.end + (last.endsStretch ? 0.2 : 0);
      if (pause > bestPause + 0.05) {
        best = end;
        bestPause = pause;
      }
    }
    return best;
  }

  /** Gives the first `end` pending words as a passage and keeps its last seconds for the next. */
  private emit(end: number): ExtractedPassage {
    const words = this.pending.slice(0, end);
    const first = words[0];
    const last = words.at(-1);
    if (!first || !last) throw new Error("a speech passage needs a word");
    const sure = words.filter((w) => w.confidence !== undefined);
    const confidence =
      sure.length > 0 ? sure.reduce((sum, w) => sum + (w.confidence ?? 0), 0) / sure.length : undefined;
    let overlap = 0;
    while (
      overlap + 1 < words.length - this.carried &&
      (overlap < 2 ||
        last.end - (words[words.length - 1 - overlap]?.start ?? 0) <= this.options.overlapSeconds)
    ) {
      overlap += 1;
    }
    this.pending = this.pending.slice(end - overlap);
    this.carried = overlap;
    return {
      content: words.map((w) => w.word).join(" "),
      locator: {
        timestamp: seconds(first.start),
        timestamp_end: seconds(Math.max(last.end, first.start)),
        source: "speech",
        ...(confidence === undefined ? {} : { confidence: Math.round(confidence * 100) / 100 }),
        word_times: words.map((w) => [seconds(w.start), seconds(w.end)] as [number, number]),
      },
    };
  }
}

/** A whole recording's speech as passages (see SpeechPassages). */
export function speechPassages(
  stretches: readonly TimedText[],
  options: SpeechPassageOptions = DEFAULT_SPEECH_PASSAGE_OPTIONS,
): ExtractedPassage[] {
  const builder = new SpeechPassages(options);
  return [...builder.add(stretches), ...builder.finish()];
}

/**
 * The words of a recording's speech passages once each, in order: consecutive passages repeat
 * the words they overlap by, which their word times tell apart from words said again.
 */
export function transcriptOf(passages: readonly ExtractedPassage[]): string {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const passage of passages) {
    const words = passage.content.split(/\s+/).filter((w) => w.length > 0);
    const times = passage.locator.word_times;
    if (!times || times.length !== words.length) {
      out.push(...words);
      continue;
    }
    words.forEach((word, i) => {
      const key = `${times[i]?.[0]}:${times[i]?.[1]}:${word}`;
      if (seen.has(key)) return;
      seen.add(key);
      out.push(word);
    });
  }
  return out.join(" ");
}
