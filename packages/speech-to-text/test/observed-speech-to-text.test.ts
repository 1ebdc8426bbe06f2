import {
  ObservedSpeechToText,
  PCM_BYTES_PER_SECOND,
  SpeechEngineError,
  type SpeechToText,
} from "../src/index.ts";

/** An engine that takes 50 ms a chunk, and fails the chunks that start with a 1. */
const engine: SpeechToText = {
  name: "fake-model",
  check: () => Promise.resolve(),
  transcribe: async (pcm) => {
    await new Promise((resolve) => setTimeout(resolve, 50));
    if (pcm[0] === 1) throw new SpeechEngineError("The fake engine is unavailable.");
    return [{ text: "hello", start: 0, end: 1 }];
  },
};

it("times each chunk once, with its seconds of sound, and passes answers and errors through", async () => {
  const seen: { engine: string; outcome: string; seconds: number; audioSeconds: number }[] = [];
  const observed = new ObservedSpeechToText(
    engine,
    {
      chunkTranscribed: (engine, outcome, seconds, audioSeconds) =>
        seen.push({ engine, outcome, seconds, audioSeconds }),
    },
    "pocketsphinx",
  );
  expect(observed.name).toBe("fake-model");
  expect(await observed.transcribe(Buffer.alloc(PCM_BYTES_PER_SECOND * 20))).toEqual([
    { text: "hello", start: 0, end: 1 },
  ]);
  await expect(observed.transcribe(Buffer.alloc(PCM_BYTES_PER_SECOND * 5, 1))).rejects.toBeInstanceOf(
    SpeechEngineError,
  );
  expect(seen.map(({ engine, outcome, audioSeconds }) => ({ engine, outcome, audioSeconds }))).toEqual([
    { engine: "pocketsphinx", outcome: "ok", audioSeconds: 20 },
    { engine: "pocketsphinx", outcome: "error", audioSeconds: 5 },
  ]);
  for (const { seconds } of seen) {
    expect(seconds).toBeGreaterThanOrEqual(0.04);
    expect(seconds).toBeLessThan(10);
  }
});
