import { speechPassages } from "../src/index.ts";

describe("speechPassages", () => {
  it("groups stretches of speech into passages of a few sentences, with their times", () => {
    const passages = speechPassages(
      [
        { text: "the harbour opens at dawn", start: 1.004, end: 2.5, confidence: 0.9 },
        { text: "ships wait outside", start: 3, end: 4.2, confidence: 0.7 },
        { text: "x".repeat(280), start: 5, end: 9 },
      ],
      { maxChars: 300 },
    );
    expect(passages).toEqual([
      {
        content: "the harbour opens at dawn ships wait outside",
        locator: { timestamp: 1, timestamp_end: 4.2, source: "speech", confidence: 0.8 },
      },
      { content: "x".repeat(280), locator: { timestamp: 5, timestamp_end: 9, source: "speech" } },
    ]);
  });

  it("cuts a long stretch between words, each piece with its own times", () => {
    const words = Array.from({ length: 100 }, (_, i) => ({ word: `word${i}`, start: i, end: i + 0.5 }));
    const text = words.map((w) => w.word).join(" ");
    const passages = speechPassages([{ text, start: 0, end: 99.5, words }], { maxChars: 100 });
    expect(passages.length).toBeGreaterThan(5);
    expect(passages.every((p) => p.content.length <= 100)).toBe(true);
    expect(passages[1]?.locator.timestamp).toBe(Number(passages[1]?.content.split(" ")[0]?.slice(4)));
    expect(passages.map((p) => p.content).join(" ")).toBe(text);
  });

  it("gives nothing for nothing", () => {
    expect(speechPassages([{ text: "  ", start: 0, end: 1 }])).toEqual([]);
  });
});
