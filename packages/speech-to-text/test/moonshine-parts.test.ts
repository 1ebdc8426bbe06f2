import { recording, speechClips } from "@locus/testing";
import { ortToOnnx, OrtFormatError } from "../src/index.ts";
import { MoonshineTokenizer } from "../src/moonshine/tokenizer.ts";
import { placeWords, splitUtterances, DEFAULT_UTTERANCE_OPTIONS } from "../src/moonshine/utterances.ts";

/** 16 kHz mono s16le: a 300 Hz tone (loud, or as soft as `amplitude` says) or silence, `seconds` long. */
const tone = (seconds: number, amplitude = 8000) => {
  const pcm = Buffer.alloc(Math.round(seconds * 16_000) * 2);
  for (let i = 0; i < pcm.length / 2; i++)
    pcm.writeInt16LE(Math.round(amplitude * Math.sin((2 * Math.PI * 300 * i) / 16_000)), i * 2);
  return pcm;
};
const quiet = (seconds: number) => Buffer.alloc(Math.round(seconds * 16_000) * 2);

describe("MoonshineTokenizer", () => {
  it("reads pieces by their length byte, and joins them into text with ▁ as spaces", () => {
    const piece = (text: string) => {
      const bytes = Buffer.from(text, "utf8");
      return Buffer.concat([Buffer.of(bytes.length), bytes]);
    };
    const data = Buffer.concat([
      piece("<unk>"),
      piece("<s>"),
      piece("</s>"),
      piece("\u2581Hel"),
      piece("lo"),
      piece("\u2581wörld"),
      piece("."),
    ]);
    const tokenizer = MoonshineTokenizer.parse(data);
    expect(tokenizer.size).toBe(7);
    expect(tokenizer.decode([1, 3, 4, 5, 6, 2, 99])).toBe("Hello wörld.");
  });

  it("reads a length of 128 or more from two bytes, low bits first", () => {
    const long = "x".repeat(200);
    const data = Buffer.concat([Buffer.of((200 & 127) | 128, 200 >> 7), Buffer.from(long)]);
    expect(MoonshineTokenizer.parse(data).size).toBe(1);
  });

  it("refuses a file cut off in a piece", () => {
    expect(() => MoonshineTokenizer.parse(Buffer.of(5, 65, 66))).toThrow("cut off");
  });
});

describe("splitUtterances", () => {
  it("cuts at the pauses after the target length, and trims each to its sound with a margin", () => {
    // 5 s of sound, 0.4 s pause, 5 s, 0.4 s, 3 s: the first cut is in the second pause (8 s reached).
    const pcm = Buffer.concat([tone(5), quiet(0.4), tone(5), quiet(0.4), tone(3)]);
    const parts = splitUtterances(pcm);
    expect(parts.map((u) => [u.start, u.end].map((t) => Math.round(t * 10) / 10))).toEqual([
      [0, 10.5],
      [10.6, 13.8],
    ]);
    // Inside the first, the pause between its two sounds is not voiced.
    expect(parts[0]?.voiced.map((v) => [v.start, v.end].map((t) => Math.round(t * 10) / 10))).toEqual([
      [0, 5],
      [5.4, 10.4],
    ]);
  });

  it("ends an utterance at a long pause however short it is, and drops the silence", () => {
    const pcm = Buffer.concat([quiet(3), tone(1), quiet(2), tone(1), quiet(3)]);
    const parts = splitUtterances(pcm);
    expect(parts.map((u) => [u.start, u.end].map((t) => Math.round(t * 10) / 10))).toEqual([
      [2.8, 4.2],
      [5.8, 7.2],
    ]);
  });

  it("cuts a stretch without pauses at its quietest moment before the longest length", () => {
    const pcm = Buffer.concat([tone(12), quiet(0.1), tone(15)]);
    const [first, second] = splitUtterances(pcm);
    expect(first?.end).toBeCloseTo(12.1, 0);
    expect((first?.end ?? 0) - (first?.start ?? 0)).toBeLessThanOrEqual(DEFAULT_UTTERANCE_OPTIONS.maxS);
    expect(second?.end).toBeCloseTo(27.1, 0);
  });

  it("keeps a softly recorded stretch (below the pipeline's −38 dBFS) as sound, and a noise floor as silence", () => {
    // RMS 212 (about −44 dBFS), alone in its chunk, after 1 s of a noise floor at RMS 35.
    const soft = splitUtterances(Buffer.concat([tone(1, 50), tone(2, 300), quiet(1)]));
    expect(soft.map((u) => [u.start, u.end].map((t) => Math.round(t * 10) / 10))).toEqual([[0.8, 3.2]]);
    // Beside loud speech, the soft stretch still counts.
    const both = splitUtterances(Buffer.concat([tone(2), quiet(2), tone(2, 300), quiet(1)]));
    expect(both).toHaveLength(2);
  });

  it("finds nothing in silence", () => {
    expect(splitUtterances(quiet(5))).toEqual([]);
    expect(splitUtterances(recording([2]).subarray(44))).toEqual([]);
  });

  it("keeps every second of a real reading in some utterance", () => {
    for (const clip of speechClips()) {
      const parts = splitUtterances(clip.pcm);
      expect(parts.length).toBeGreaterThan(0);
      for (const u of parts) expect(u.end - u.start).toBeLessThanOrEqual(DEFAULT_UTTERANCE_OPTIONS.maxS);
    }
  });
});

describe("placeWords", () => {
  const voiced = [
    { start: 0, end: 2 },
    { start: 3, end: 5 },
  ];

  it("spreads words over voiced time only, by their length", () => {
    const times = placeWords(["aaa", "bbb", "ccc", "ddd"], [null, null, null, null], { duration: 5, voiced });
    // 4 s of voice, a second each: the third word starts after the pause.
    expect(times.map((t) => t.start)).toEqual([0, 1, 3, 4]);
    for (const t of times) expect(t.end).toBeGreaterThan(t.start);
  });

  it("keeps the placed words, and spreads the others between them", () => {
    const times = placeWords(
      ["one", "two", "three"],
      [{ start: 0.2, end: 0.6 }, null, { start: 4.5, end: 4.9 }],
      {
        duration: 5,
        voiced,
      },
    );
    expect(times[0]).toEqual({ start: 0.2, end: 0.6 });
    expect(times[2]).toEqual({ start: 4.5, end: 4.9 });
    expect(times[1]?.start).toBeCloseTo(0.6, 5);
    expect(times[1]?.end).toBeLessThanOrEqual(4.5);
  });
});

describe("ortToOnnx", () => {
  it("refuses a file that is not an ONNX Runtime model", () => {
    expect(() => ortToOnnx(Buffer.from("not a model at all"))).toThrow(OrtFormatError);
    expect(() => ortToOnnx(Buffer.alloc(4))).toThrow(OrtFormatError);
  });
});
