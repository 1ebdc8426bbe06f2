import { recording, speak } from "@locus/testing";
import { parseTimedOutput, PocketsphinxSpeechToText, SpeechEngineError } from "../src/index.ts";

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
