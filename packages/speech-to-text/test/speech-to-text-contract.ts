import { recording, speechClips, wordErrors, type SpeechClip } from "@locus/testing";
import type { SpeechSegment, SpeechToText } from "../src/index.ts";

/** Seconds of silence of 16 kHz mono s16le. */
const quiet = (seconds: number) => Buffer.alloc(Math.round(seconds * 16_000) * 2);

export interface ContractExpectations {
  /** The most words of the real clips the engine may get wrong (word error rate, 0–1). */
  maxWordErrorRate: number;
}

const textOf = (segments: SpeechSegment[]) => segments.map((s) => s.text).join(" ");
const wordsOf = (segments: SpeechSegment[]) => segments.flatMap((s) => s.words ?? []);

/**
 * What every SpeechToText must do, on real human speech (bench/fixtures/speech) and silence:
 * hear nothing in silence; transcribe a chunk of several readings whole, each word with a time
 * inside its own reading (the words are what passages, narrowing and locators are made of); keep
 * times relative to the chunk, never going back; stop when asked to; say plainly when it cannot run.
 */
export function speechToTextContract(
  name: string,
  make: () => SpeechToText,
  broken: () => SpeechToText,
  expected: ContractExpectations,
): void {
  describe(`SpeechToText contract: ${name}`, () => {
    const engine = make();
    const clips: SpeechClip[] = speechClips();

    it("can run here", async () => {
      await expect(engine.check()).resolves.toBeUndefined();
    }, 60_000);

    it("hears nothing in silence", async () => {
      expect(await engine.transcribe(quiet(3))).toEqual([]);
    }, 30_000);

    it(`transcribes a chunk of real readings whole, with each word timed inside its reading (word error rate ≤ ${expected.maxWordErrorRate})`, async () => {
      // The clips one after another, 1.5 s apart after 2 s of silence: a chunk as long as the
      // pipeline's (about 40 s).
      const parts: Buffer[] = [quiet(2)];
      const spans: { clip: SpeechClip; start: number; end: number }[] = [];
      let at = 2;
      for (const clip of clips) {
        const seconds = clip.pcm.length / 32_000;
        spans.push({ clip, start: at, end: at + seconds });
        parts.push(clip.pcm, quiet(1.5));
        at += seconds + 1.5;
      }
      const segments = await engine.transcribe(Buffer.concat(parts));
      const reference = clips.map((c) => c.text).join(" ");
      const { words, errors } = wordErrors(reference, textOf(segments));
      expect(errors / words).toBeLessThanOrEqual(expected.maxWordErrorRate);

      const timed = wordsOf(segments);
      expect(timed.length).toBeGreaterThan(0);
      let last = 0;
      for (const w of timed) {
        expect(w.start).toBeGreaterThanOrEqual(last);
        expect(w.end).toBeGreaterThanOrEqual(w.start);
        expect(w.end).toBeLessThanOrEqual(at + 0.5);
        last = w.start;
      }
      // Every reading was heard (none dropped), and its words were placed within it: a word is
      // found to the second by these times.
      const within = (w: { start: number; end: number }, span: { start: number; end: number }) =>
        w.start >= span.start - 0.5 && w.end <= span.end + 0.5;
      for (const span of spans) {
        const heard = timed.some((w) => within(w, span));
        expect({ clip: span.clip.file, heard }).toEqual({ clip: span.clip.file, heard: true });
      }
      // And no word is placed in the silence between readings.
      const misplaced = timed.filter((w) => !spans.some((span) => within(w, span)));
      expect(misplaced).toEqual([]);
      for (const s of segments) {
        expect(s.start).toBeGreaterThanOrEqual(0);
        expect(s.end).toBeGreaterThanOrEqual(s.start);
      }
    }, 180_000);

    it("stops when asked to", async () => {
      const controller = new AbortController();
      controller.abort();
      const speech = recording([0.5]).subarray(44);
      await expect(
        engine.transcribe(Buffer.concat([speech, ...clips.map((c) => c.pcm)]), { signal: controller.signal }),
      ).rejects.toThrow();
    }, 30_000);

    it("says plainly when it cannot run", async () => {
      await expect(broken().check()).rejects.toMatchObject({ code: "speech_engine_unavailable" });
    }, 30_000);
  });
}
