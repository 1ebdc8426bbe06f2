import { FRAME_BYTES, FRAME_S, frameRms, QUIET_RMS } from "../pcm.ts";
import { PCM_BYTES_PER_SECOND } from "../speech-to-text.ts";

/** A stretch of time, in seconds. */
export interface Span {
  start: number;
  end: number;
}

/** A stretch of a chunk with speech in it, in seconds from the chunk's start. */
export interface Utterance extends Span {
  pcm: Buffer;
  /** Where in it sound is loud (its pauses left out), in seconds from the utterance's start. */
  voiced: Span[];
}

export interface UtteranceOptions {
  /** An utterance ends at the first pause after it is this long… */
  targetS: number;
  /** …or, with no pause, at the quietest moment before this length. */
  maxS: number;
  /** A pause is a run of quiet frames this long. */
  minPauseS: number;
  /** A pause this long ends an utterance however short: what follows is another thought. */
  breakS: number;
  /** Quiet kept before and after the speech of each utterance. */
  marginS: number;
}

/**
 * Short enough that a model reading at most 30 s at once never meets a longer piece, and that the
 * words of one spread over it (when no aligner places them) land near where they are said; long
 * enough that a sentence is seldom cut and the model has its context.
 */
export const DEFAULT_UTTERANCE_OPTIONS: UtteranceOptions = {
  targetS: 8,
  maxS: 20,
  minPauseS: 0.25,
  breakS: 1,
  marginS: 0.2,
};

/**
 * Cuts a chunk of PCM into utterances at pauses, each trimmed to its speech (with `marginS` of
 * quiet around it); stretches with no loud frame are dropped (see `loudLevel`).
 */
export function splitUtterances(
  pcm: Buffer,
  options: UtteranceOptions = DEFAULT_UTTERANCE_OPTIONS,
): Utterance[] {
  const frames = Math.ceil(pcm.length / FRAME_BYTES);
  const rms = Array.from({ length: frames }, (_, i) => frameRms(pcm, i * FRAME_BYTES));
  const level = loudLevel(rms);
  const loud = rms.map((r) => r >= level);
  const target = Math.round(options.targetS / FRAME_S);
  const max = Math.round(options.maxS / FRAME_S);
  const pause = Math.max(1, Math.round(options.minPauseS / FRAME_S));
  const breakFrames = Math.max(pause, Math.round(options.breakS / FRAME_S));
  const cuts: number[] = [0];
  let quietRun = 0;
  let heard = false;
  for (let i = 0; i < frames; i++) {
    quietRun = loud[i] ? 0 : quietRun + 1;
    if (loud[i]) heard = true;
    const from = cuts.at(-1) ?? 0;
    const length = i + 1 - from;
    if (heard && quietRun === breakFrames) {
      // At the start of the long pause: its quiet goes with what follows (and is trimmed there).
      cuts.push(i + 1 - quietRun + Math.min(quietRun, Math.round(options.marginS / FRAME_S)));
      heard = false;
    } else if (length >= target && quietRun >= pause) {
      // In the middle of the pause.
      cuts.push(i + 1 - Math.floor(quietRun / 2));
      quietRun = 0;
      heard = false;
    } else if (length >= max) {
      // No pause: the quietest frame of the stretch past the target.
      let quietest = from + target;
      for (let j = quietest; j <= i; j++) if ((rms[j] ?? 0) < (rms[quietest] ?? 0)) quietest = j;
      cuts.push(Math.max(from + 1, quietest));
      quietRun = 0;
      heard = loud.slice(quietest, i + 1).some(Boolean);
    }
  }
  cuts.push(frames);
  const margin = Math.round(options.marginS / FRAME_S);
  const utterances: Utterance[] = [];
  for (let c = 0; c + 1 < cuts.length; c++) {
    const from = cuts[c] ?? 0;
    const to = cuts[c + 1] ?? frames;
    let first = from;
    while (first < to && !loud[first]) first++;
    if (first === to) continue;
    let last = to - 1;
    while (last > first && !loud[last]) last--;
    const start = Math.max(from, first - margin);
    const end = Math.min(to, last + 1 + margin);
    utterances.push({
      start: start * FRAME_S,
      end: Math.min(end * FRAME_S, pcm.length / PCM_BYTES_PER_SECOND),
      pcm: pcm.subarray(start * FRAME_BYTES, end * FRAME_BYTES),
      voiced: voicedSpans(loud, start, end, pause),
    });
  }
  return utterances;
}

/**
 * How loud a frame must be to count as sound: 12 dB above the chunk's noise floor (its quietest
 * tenth of frames), at most the pipeline's level (about −38 dBFS) and at least about −55 dBFS. So a
 * softly recorded speaker, or a soft stretch beside loud speech, is not taken for silence and
 * dropped, while a noisy recording's pauses are still found.
 */
function loudLevel(rms: readonly number[]): number {
  const sorted = [...rms].sort((a, b) => a - b);
  const noise = sorted[Math.floor(sorted.length * 0.1)] ?? 0;
  return Math.min(QUIET_RMS, Math.max(NOISE_RMS, noise * 4));
}

/** RMS (of 32768) of about −55 dBFS: below it, never sound. */
const NOISE_RMS = 60;

/**
 * The runs of loud frames from `from` to `to` (quiet shorter than a pause joined: a word has
 * quiet moments of its own), in seconds from `from`.
 */
function voicedSpans(loud: readonly boolean[], from: number, to: number, pause: number): Span[] {
  const spans: Span[] = [];
  let i = from;
  while (i < to) {
    while (i < to && !loud[i]) i++;
    if (i === to) break;
    let end = i;
    let quiet = 0;
    for (let j = i; j < to; j++) {
      if (loud[j]) {
        end = j + 1;
        quiet = 0;
      } else if (++quiet >= pause) break;
    }
    spans.push({ start: (i - from) * FRAME_S, end: (end - from) * FRAME_S });
    i = end;
  }
  return spans;
}

/**
 * Times for the words an aligner did not place (null): each run of them shares the speech between
 * its placed neighbours (the utterance's ends where it has none), in proportion to their length
 * (letters, and a pause after each), counted in voiced time only, so no word lands in a pause.
 */
export function placeWords(
  words: readonly string[],
  placed: readonly (Span | null)[],
  utterance: { duration: number; voiced: readonly Span[] },
): Span[] {
  const times: Span[] = [];
  let i = 0;
  while (i < words.length) {
    const known = placed[i];
    if (known) {
      times.push(known);
      i++;
      continue;
    }
    let j = i;
    while (j < words.length && !placed[j]) j++;
    const from = times.at(-1)?.end ?? 0;
    const to = placed[j]?.start ?? utterance.duration;
    times.push(...spread(words.slice(i, j), from, Math.max(from, to), utterance.voiced));
    i = j;
  }
  return times;
}

/** Words over the voiced time between `from` and `to` (all of it, when none is voiced). */
function spread(words: readonly string[], from: number, to: number, voiced: readonly Span[]): Span[] {
  const inside = voiced
    .map((v) => ({ start: Math.max(v.start, from), end: Math.min(v.end, to) }))
    .filter((v) => v.end > v.start);
  const spans = inside.length > 0 ? inside : [{ start: from, end: to }];
  const total = spans.reduce((sum, v) => sum + (v.end - v.start), 0);
  // Voiced time `t` (seconds into the voiced spans) as a time of the utterance.
  const at = (t: number): number => {
    let left = t;
    for (const v of spans) {
      if (left < v.end - v.start) return v.start + left;
      left -= v.end - v.start;
    }
    return spans.at(-1)?.end ?? to;
  };
  const weights = words.map((w) => w.length + 1);
  const sum = weights.reduce((a, b) => a + b, 0);
  let done = 0;
  return weights.map((weight) => {
    const start = at((total * done) / sum);
    // The word, without the pause after it.
    const end = at((total * (done + weight - 1)) / sum);
    done += weight;
    return { start, end: Math.max(start, end) };
  });
}
