import { SpeechPassages, speechPassages, transcriptOf, type TimedText } from "../src/index.ts";

/** Words said one after another, `gap` seconds apart, each lasting 0.4 s. */
function said(text: string, from: number, gap = 0.5): TimedText {
  const words = text
    .split(" ")
    .map((word, i) => ({ word, start: from + i * gap, end: from + i * gap + 0.4 }));
  return { text, start: from, end: words.at(-1)?.end ?? from, words };
}

const OPTIONS = { maxChars: 200, maxSeconds: 15, overlapSeconds: 2.5 };

describe("speechPassages", () => {
  it("keeps each word's times with its passage, and the passage's span from its first to its last word", () => {
    const passages = speechPassages([
      { ...said("the harbour opens at dawn", 1.004), confidence: 0.9 },
      { ...said("ships wait outside", 4), confidence: 0.7 },
    ]);
    expect(passages).toEqual([
      {
        content: "the harbour opens at dawn ships wait outside",
        locator: {
          timestamp: 1,
          timestamp_end: 5.4,
          source: "speech",
          confidence: 0.83,
          word_times: [
            [1, 1.4],
            [1.5, 1.9],
            [2, 2.4],
            [2.5, 2.9],
            [3, 3.4],
            [4, 4.4],
            [4.5, 4.9],
            [5, 5.4],
          ],
        },
      },
    ]);
  });

  it("gives a stretch without word times the stretch's times for each of its words", () => {
    const [passage] = speechPassages([{ text: "Hello, world.", start: 2, end: 3.5 }]);
    expect(passage?.locator.word_times).toEqual([
      [2, 3.5],
      [2, 3.5],
    ]);
  });

  it("cuts at most maxSeconds long, at a pause when there is one, with the last seconds carried over", () => {
    // 40 s of steady speech with a long pause after the 12th second.
    const first = said(Array.from({ length: 24 }, (_, i) => `a${i}`).join(" "), 0);
    const second = said(Array.from({ length: 56 }, (_, i) => `b${i}`).join(" "), 13);
    const passages = speechPassages([first, second], OPTIONS);
    for (const p of passages) {
      expect((p.locator.timestamp_end ?? 0) - (p.locator.timestamp ?? 0)).toBeLessThanOrEqual(15);
      expect(p.content.length).toBeLessThanOrEqual(200);
    }
    // The first cut is at the pause: the first passage ends with the first stretch's last words.
    expect(passages[0]?.content.endsWith("a23")).toBe(true);
    // Every passage after the first starts with the last words (two or more, about 2.5 s) of the one before.
    for (let i = 1; i < passages.length; i++) {
      const before = passages[i - 1]?.content.split(" ") ?? [];
      const after = passages[i]?.content.split(" ") ?? [];
      const carried = before.length - before.indexOf(after[0] ?? "");
      expect(carried).toBeGreaterThanOrEqual(2);
      expect(carried).toBeLessThanOrEqual(6);
      expect(after.slice(0, carried)).toEqual(before.slice(-carried));
    }
    // Nothing is lost or doubled: the transcript has every word said, once, in order.
    expect(transcriptOf(passages)).toBe(`${first.text} ${second.text}`);
  });

  it("keeps a phrase whole across chunk boundaries: passages overlap across add() calls", () => {
    const builder = new SpeechPassages({ maxChars: 40, maxSeconds: 15, overlapSeconds: 2.5 });
    const out = [
      ...builder.add([said("one two three four five six seven", 0)]),
      ...builder.add([said("eight nine ten eleven twelve", 4)]),
      ...builder.finish(),
    ];
    expect(out.length).toBeGreaterThan(1);
    // "seven eight" is said across the two chunks: one passage has both.
    expect(out.some((p) => p.content.includes("seven eight"))).toBe(true);
  });

  it("gives nothing for nothing", () => {
    expect(speechPassages([{ text: "  ", start: 0, end: 1 }])).toEqual([]);
  });
});
