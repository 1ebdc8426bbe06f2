import { readFileSync } from "node:fs";
import { join } from "node:path";
import { wavSamples } from "./media-factory.ts";
import { QUALITY_FIXTURES } from "./quality-fixtures.ts";

/**
 * Real human speech with reference transcripts nobody wrote for Locus (bench/fixtures/speech: its
 * README says where each clip comes from).
 */
export const SPEECH_FIXTURES = join(QUALITY_FIXTURES, "..", "speech");

export interface SpeechClip {
  file: string;
  /** `dev` clips choose an engine's settings; `test` clips are reported apart. */
  set: "dev" | "test";
  /** What is said, lower case, without punctuation. */
  text: string;
  /** 16 kHz mono s16le samples. */
  pcm: Buffer;
}

/** The clips, each with its samples (the WAV's `data` chunk). */
export function speechClips(): SpeechClip[] {
  const { clips } = JSON.parse(readFileSync(join(SPEECH_FIXTURES, "transcripts.json"), "utf8")) as {
    clips: Omit<SpeechClip, "pcm">[];
  };
  return clips.map((clip) => ({ ...clip, pcm: wavSamples(readFileSync(join(SPEECH_FIXTURES, clip.file))) }));
}

/** Titles said as words: a transcript may write either. */
const SAID_AS = new Map([
  ["mr", "mister"],
  ["mrs", "missus"],
  ["dr", "doctor"],
]);

/** The words of a transcript as word error rates compare them: see bench/fixtures/speech/README.md. */
export function comparableWords(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}' ]+/gu, " ")
    .split(/\s+/)
    .filter(Boolean)
    .map((word) => SAID_AS.get(word) ?? word);
}

/** Word-level edit distance: substitutions, deletions and insertions to turn `hypothesis` into `reference`. */
export function wordErrors(reference: string, hypothesis: string): { words: number; errors: number } {
  const r = comparableWords(reference);
  const h = comparableWords(hypothesis);
  let prev = Array.from({ length: h.length + 1 }, (_, j) => j);
  for (let i = 1; i <= r.length; i++) {
    const row = [i];
    for (let j = 1; j <= h.length; j++) {
      row[j] = Math.min(
        (prev[j] ?? 0) + 1,
        (row[j - 1] ?? 0) + 1,
        (prev[j - 1] ?? 0) + (r[i - 1] === h[j - 1] ? 0 : 1),
      );
    }
    prev = row;
  }
  return { words: r.length, errors: prev[h.length] ?? 0 };
}
