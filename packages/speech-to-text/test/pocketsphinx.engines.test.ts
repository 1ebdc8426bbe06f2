import { recording, speak } from "@locus/testing";
import { speechClips } from "@locus/testing";
import {
  dictionaryForms,
  parseTimedOutput,
  PocketsphinxSpeechToText,
  SpeechEngineError,
} from "../src/index.ts";
import { speechToTextContract } from "./speech-to-text-contract.ts";

// pocketsphinx is the fallback: it mishears real voices (see bench/report), hence the bound.
speechToTextContract(
  "pocketsphinx (Debian's pocketsphinx and pocketsphinx-en-us)",
  () => new PocketsphinxSpeechToText(),
  () => new PocketsphinxSpeechToText({ modelDir: "/nonexistent/model" }),
  { maxWordErrorRate: 0.7 },
);

/** 16 kHz mono samples of a WAV made by `recording`. */
const samples = (wav: Buffer) => wav.subarray(44);

describe("PocketsphinxSpeechToText (Debian's pocketsphinx and pocketsphinx-en-us, speech from flite)", () => {
  const engine = new PocketsphinxSpeechToText();

  it("is installed", async () => {
    await expect(engine.check()).resolves.toBeUndefined();
  });

  it("transcribes speech with the time of each word", async () => {
    const audio = recording([3, await speak("Please contact the caretaker with questions."), 1]);
    const segments = await engine.transcribe(samples(audio));
    const words = segments.flatMap((s) => s.words ?? []);
    const caretaker = words.find((w) => w.word === "caretaker");
    // Spoken after three seconds of silence, a second or so into the sentence.
    expect(caretaker?.start).toBeGreaterThan(3);
    expect(caretaker?.start).toBeLessThan(5.5);
    expect(segments.map((s) => s.text).join(" ")).toMatch(/contact the caretaker/);
    for (const s of segments) {
      expect(s.end).toBeGreaterThanOrEqual(s.start);
      expect(s.confidence).toBeGreaterThan(0);
      expect(s.confidence).toBeLessThanOrEqual(1);
    }
  }, 30_000);

  it("hears nothing in silence", async () => {
    expect(await engine.transcribe(samples(recording([3])))).toEqual([]);
  }, 30_000);

  it("says plainly when the recogniser or its model is missing", async () => {
    const noBinary = new PocketsphinxSpeechToText({ binary: "pocketsphinx_nowhere" });
    await expect(noBinary.check()).rejects.toThrow(
      "The speech recogniser pocketsphinx_nowhere is not installed: install Debian's pocketsphinx package",
    );
    await expect(noBinary.transcribe(samples(recording([1])))).rejects.toBeInstanceOf(SpeechEngineError);
    const noModel = new PocketsphinxSpeechToText({ modelDir: "/nonexistent/model" });
    await expect(noModel.check()).rejects.toThrow(/install Debian's pocketsphinx-en-us package/);
  });
});

describe("PocketsphinxSpeechToText's forced alignment", () => {
  const engine = new PocketsphinxSpeechToText();

  it("places each word of a transcript where it is said, and leaves words it cannot say unplaced", async () => {
    const clip = speechClips().find((c) => c.file.includes("0870"));
    if (!clip) throw new Error("no speech fixture");
    // After 2 s of silence; "Xqzv" is in no dictionary.
    const pcm = Buffer.concat([Buffer.alloc(64_000), clip.pcm]);
    const words = ["And", "Mr.", "John", "Dashwood", "Xqzv", "had", "then", "leisure"];
    const times = await engine.align(pcm, words);
    expect(times).toHaveLength(words.length);
    expect(times[4]).toBeNull();
    // Where a reading of the clip by ear puts them: "John" about 0.6 s in, "leisure" 2.2 s.
    expect(times[2]?.start).toBeCloseTo(2.63, 0);
    expect(times[7]?.start).toBeCloseTo(4.22, 0);
    const placed = times.filter((t) => t !== null);
    for (let i = 1; i < placed.length; i++)
      expect(placed[i]?.start).toBeGreaterThanOrEqual(placed[i - 1]?.end ?? 0);
  }, 30_000);

  it("places nothing when no word is in its dictionary", async () => {
    expect(await engine.align(Buffer.alloc(32_000), ["Xqzv", "42"])).toEqual([null, null]);
  });

  it("says words as its dictionary lists them", () => {
    expect(dictionaryForms("Ill-disposed,")).toEqual(["ill", "disposed"]);
    expect(dictionaryForms("don\u2019t")).toEqual(["don't"]);
    expect(dictionaryForms('"Mr."')).toEqual(["mr"]);
    expect(dictionaryForms("—")).toEqual([]);
  });
});

describe("parseTimedOutput", () => {
  it("reads utterances and word times, without silences, noises or pronunciation marks", () => {
    const output = [
      "the lighthouse keeper",
      "<s> 0.000 0.140 0.999600",
      "the 0.150 0.290 0.845676",
      "<sil> 0.290 0.300 1.000000",
      "lighthouse 0.300 0.940 0.995211",
      "keeper(2) 0.950 1.270 0.995310",
      "</s> 1.280 1.300 1.000000",
      "hello",
      "<s> 2.000 2.100 1.000000",
      "[NOISE] 2.100 2.200 1.000000",
      "hello 2.200 2.700 0.5",
      "</s> 2.700 2.800 1.000000",
    ].join("\n");
    expect(parseTimedOutput(output)).toEqual([
      {
        text: "the lighthouse keeper",
        start: 0.15,
        end: 1.27,
        confidence: expect.closeTo(0.945, 3) as number,
        words: [
          { word: "the", start: 0.15, end: 0.29 },
          { word: "lighthouse", start: 0.3, end: 0.94 },
          { word: "keeper", start: 0.95, end: 1.27 },
        ],
      },
      {
        text: "hello",
        start: 2.2,
        end: 2.7,
        confidence: 0.5,
        words: [{ word: "hello", start: 2.2, end: 2.7 }],
      },
    ]);
  });
});
