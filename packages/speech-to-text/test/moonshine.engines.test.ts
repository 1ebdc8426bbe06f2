import { speechClips, wordErrors } from "@locus/testing";
import { MoonshineSpeechToText, PocketsphinxSpeechToText, type WordAligner } from "../src/index.ts";
import { speechToTextContract } from "./speech-to-text-contract.ts";

// Moonshine base, as `pnpm install` fetched and converted it (packages/speech-to-text/models).
speechToTextContract(
  "moonshine, words placed by pocketsphinx's forced alignment",
  () => new MoonshineSpeechToText({ aligner: new PocketsphinxSpeechToText() }),
  () => new MoonshineSpeechToText({ modelDir: "/nonexistent/model" }),
  { maxWordErrorRate: 0.1 },
);

speechToTextContract(
  "moonshine, words spread over their utterance (no aligner)",
  () => new MoonshineSpeechToText(),
  () => new MoonshineSpeechToText({ modelDir: "/nonexistent/model" }),
  { maxWordErrorRate: 0.1 },
);

describe("MoonshineSpeechToText's word times", () => {
  it("are the aligner's where it places a word, and spread over the utterance where it does not", async () => {
    const [clip] = speechClips();
    if (!clip) throw new Error("no speech fixture");
    const calls: string[][] = [];
    // Places only the first word, 0.5 s into the utterance: the rest are spread.
    const aligner: WordAligner = {
      align: (_pcm, words) => {
        calls.push([...words]);
        return Promise.resolve(words.map((_, i) => (i === 0 ? { start: 0.5, end: 0.8 } : null)));
      },
    };
    const segments = await new MoonshineSpeechToText({ aligner }).transcribe(clip.pcm);
    const [segment] = segments;
    expect(calls[0]).toEqual(segment?.text.split(" "));
    const words = segment?.words ?? [];
    expect(words[0]).toMatchObject({ start: (segment?.start ?? 0) + 0.5, end: (segment?.start ?? 0) + 0.8 });
    expect(words.at(-1)?.end).toBeLessThanOrEqual((segment?.end ?? 0) + 0.01);
    expect(wordErrors(clip.text, segment?.text ?? "").errors).toBeLessThanOrEqual(1);
  }, 60_000);

  it("says the model is missing, naming what to run", async () => {
    await expect(new MoonshineSpeechToText({ modelDir: "/nonexistent/model" }).check()).rejects.toThrow(
      /The Moonshine speech model is not installed here .*run pnpm install, or choose another engine with LOCUS_SPEECH_ENGINE/,
    );
  });
});

describe("MoonshineSpeechToText without a working aligner", () => {
  it("spreads the words over the utterance instead of failing the recording", async () => {
    const [clip] = speechClips();
    if (!clip) throw new Error("no speech fixture");
    // Debian's pocketsphinx missing: every alignment throws.
    const aligner = new PocketsphinxSpeechToText({ binary: "pocketsphinx_nowhere" });
    const segments = await new MoonshineSpeechToText({ aligner }).transcribe(clip.pcm);
    const words = segments.flatMap((s) => s.words ?? []);
    expect(words.length).toBeGreaterThan(10);
    expect(wordErrors(clip.text, segments.map((s) => s.text).join(" ")).errors).toBeLessThanOrEqual(1);
  }, 60_000);
});
