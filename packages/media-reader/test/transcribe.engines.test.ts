import { execFileSync } from "node:child_process";
import { pollUntil, recording, speak } from "@locus/testing";
import { PocketsphinxSpeechToText, type SpeechSegment, type SpeechToText } from "@locus/speech-to-text";
import type { ExtractedPassage } from "@locus/contracts";
import { CHUNK_ATTEMPTS, MediaReadError, transcribeRecording, transcriptOf } from "../src/index.ts";

const quiet = { warn: () => undefined };

/** The ffmpeg processes this test process started that still run. */
function ffmpegChildren(): string[] {
  const ps = execFileSync("ps", ["-o", "comm=", "--ppid", String(process.pid)], { encoding: "utf8" });
  return ps.split("\n").filter((name) => name.includes("ffmpeg"));
}

async function run(audio: Buffer, speech: SpeechToText) {
  const passages: ExtractedPassage[] = [];
  const progress: number[] = [];
  const gen = transcribeRecording(
    audio,
    "audio/wav",
    {
      speech,
      logger: quiet,
      maxDurationS: 3600,
      chunks: { targetS: 3, maxS: 20, minPauseS: 0.3, silenceRms: 400 },
    },
    (p) => progress.push(p),
  );
  for (;;) {
    const next = await gen.next();
    if (next.done) return { passages, progress, durationS: next.value };
    passages.push(next.value);
  }
}

describe("transcribeRecording (real ffmpeg and pocketsphinx)", () => {
  it("transcribes chunk by chunk, with times from the start of the recording, and reports progress", async () => {
    const audio = recording([
      1,
      await speak("The first topic is the harbour budget."),
      2,
      await speak("The second topic is the lighthouse repairs."),
      1,
    ]);
    const { passages, progress, durationS } = await run(audio, new PocketsphinxSpeechToText());
    expect(durationS).toBeCloseTo((audio.length - 44) / 32_000, 1);
    const lighthouse = passages.flatMap((p) => {
      const i = p.content.split(" ").indexOf("lighthouse");
      return i < 0 ? [] : [p.locator.word_times?.[i]?.[0]];
    })[0];
    // The second sentence starts after 1 s + the first sentence (~2.5 s) + 2 s.
    expect(lighthouse).toBeGreaterThan(4.5);
    expect(progress.length).toBeGreaterThan(1);
    expect(progress.at(-1)).toBeCloseTo(1, 1);
  }, 30_000);

  it("tries a chunk again when the engine fails on it, and hears the whole recording (a stand-in engine that fails its second call)", async () => {
    const real = new PocketsphinxSpeechToText();
    let calls = 0;
    const flaky: SpeechToText = {
      name: "flaky",
      check: () => Promise.resolve(),
      transcribe: (pcm: Buffer): Promise<SpeechSegment[]> => {
        calls += 1;
        return calls === 2 ? Promise.reject(new Error("engine crashed on this chunk")) : real.transcribe(pcm);
      },
    };
    const sentence = await speak("Each part of this recording is a chunk of its own.");
    const { passages } = await run(recording([sentence, 1, sentence, 1, sentence, 1]), flaky);
    expect(calls).toBe(4);
    // Every sentence was heard: the failed chunk's on its second try.
    expect(
      transcriptOf(passages)
        .split(" ")
        .filter((w) => w === "chunk"),
    ).toHaveLength(3);
  }, 30_000);

  it("fails the recording (speech_incomplete, naming the stretch and why) when a chunk fails twice, never ready without part of its speech", async () => {
    const real = new PocketsphinxSpeechToText();
    let calls = 0;
    // A stand-in engine that fails on the second chunk, however often it is tried.
    const failsOnSecond: SpeechToText = {
      name: "fails-on-second",
      check: () => Promise.resolve(),
      transcribe: (pcm: Buffer): Promise<SpeechSegment[]> => {
        calls += 1;
        return calls >= 2 ? Promise.reject(new Error("engine crashed on this chunk")) : real.transcribe(pcm);
      },
    };
    const sentence = await speak("Each part of this recording is a chunk of its own.");
    const failure = await run(recording([sentence, 1, sentence, 1, sentence, 1]), failsOnSecond).then(
      () => null,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(MediaReadError);
    expect(failure).toMatchObject({ code: "speech_incomplete" });
    expect((failure as Error).message).toMatch(
      /could not transcribe the speech from 0:0\d to 0:0\d of this recording \(tried 2 times: engine crashed on this chunk\)/,
    );
    expect(calls).toBe(1 + CHUNK_ATTEMPTS);
    // The decoder ended with the recording: it was left waiting on its pipe before.
    expect(await pollUntil(ffmpegChildren, (names) => names.length === 0, { everyMs: 100 })).toEqual([]);
  }, 30_000);
});
