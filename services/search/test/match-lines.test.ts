import type { StoredLocator } from "@locus/contracts";
import { queryWords } from "@locus/passages";
import { LEAD_IN_S, narrowToSpans, placeMatch } from "../src/match-lines.ts";

const box = (line: number) => ({ x: 72, y: 60 + 16.5 * (line - 1), width: 400, height: 13 });

/** A five-line text passage from line 10 of page 3, with a box per line. */
const content = [
  "the harbour budget was approved",
  "after a long debate about the",
  "lighthouse and its old",
  "keepers at dawn",
  "closing remarks",
].join("\n");
const text: StoredLocator = {
  page: 3,
  line: 10,
  line_end: 14,
  source: "text",
  bbox: { x: 72, y: 60, width: 400, height: 79 },
  line_boxes: [box(1), box(2), box(3), box(4), box(5)],
};

describe("placeMatch on text passages", () => {
  it("narrows to the line of the match, with its box, and highlights the word in code points", () => {
    const placed = placeMatch(content, text, queryWords("keepers"));
    expect(placed.locator).toMatchObject({ page: 3, line: 13, line_end: 13, bbox: box(4) });
    expect(placed.locator).not.toHaveProperty("line_boxes");
    const [h] = placed.highlights;
    expect(Array.from(content).slice(h?.start, h?.end).join("")).toBe("keepers");
  });

  it("shows boxes to a tenth of a point, without the arithmetic's binary noise", () => {
    // Boxes as pdf.js's transforms leave them: 13.100000000000023 and the like.
    const noisy = (line: number) => ({
      ...box(line),
      x: 72.04999999,
      y: box(line).y + 0.1 + 0.2,
      height: 13.100000000000023,
    });
    const stored: StoredLocator = {
      ...text,
      bbox: { x: 72.04999999, y: 60.30000000000001, width: 400.000001, height: 79.12 },
      line_boxes: [1, 2, 3, 4, 5].map(noisy),
    };
    expect(placeMatch(content, stored, queryWords("keepers")).locator.bbox).toEqual({
      x: 72,
      y: 109.8,
      width: 400,
      height: 13.1,
    });
    expect(placeMatch(content, stored, queryWords("nothing here")).locator.bbox).toEqual({
      x: 72,
      y: 60.3,
      width: 400,
      height: 79.1,
    });
  });

  it("narrows to the closest run holding the most query words, across lines", () => {
    const placed = placeMatch(content, text, queryWords("debate lighthouse"));
    expect(placed.locator).toMatchObject({ line: 11, line_end: 12 });
    expect(placed.highlights).toHaveLength(2);
  });

  it("points at the line with the form typed, not an earlier word of the same stem", () => {
    const lines = ["sizes are 3 and 4 respectively", "as given below", "a respectable margin"].join("\n");
    const locator: StoredLocator = { page: 2, line: 7, line_end: 9, source: "text" };
    expect(placeMatch(lines, locator, queryWords("respectable")).locator).toMatchObject({
      line: 9,
      line_end: 9,
    });
    expect(placeMatch(lines, locator, queryWords("respectively")).locator).toMatchObject({
      line: 7,
      line_end: 7,
    });
  });

  it("a match on a word completed from the next line covers both lines", () => {
    const joined = "we determine\nthe tide";
    const locator: StoredLocator = { page: 1, line: 4, line_end: 5, source: "text", line_joins: [0] };
    expect(placeMatch(joined, locator, queryWords("determine")).locator).toMatchObject({
      line: 4,
      line_end: 5,
    });
    // A word elsewhere on the line does not.
    expect(placeMatch(joined, locator, queryWords("we")).locator).toMatchObject({ line: 4, line_end: 4 });
  });

  it("keeps the passage's locator, and highlights nothing, when no word of the query is in it", () => {
    const placed = placeMatch(content, text, queryWords("zebra"));
    expect(placed).toEqual({
      locator: { page: 3, line: 10, line_end: 14, source: "text", bbox: text.bbox },
      highlights: [],
      matched: false,
    });
  });
});

describe("placeMatch on speech passages", () => {
  const spoken = "so the first topic is the harbour budget and then the lighthouse repairs";
  const words = spoken.split(" ");
  // One word every 0.6 s from 20 s.
  const speech: StoredLocator = {
    timestamp: 20,
    timestamp_end: 20 + 0.6 * words.length,
    source: "speech",
    word_times: words.map((_, i) => [20 + 0.6 * i, 20.5 + 0.6 * i] as [number, number]),
  };

  it("narrows timestamp and timestamp_end to the words that match, starting just before the first", () => {
    const placed = placeMatch(spoken, speech, queryWords("lighthouse repairs"));
    const first = words.indexOf("lighthouse");
    expect(placed.locator.timestamp).toBeCloseTo(20 + 0.6 * first - LEAD_IN_S, 5);
    expect(placed.locator.timestamp_end).toBeCloseTo(20.5 + 0.6 * (first + 1), 5);
    expect(placed.locator).not.toHaveProperty("word_times");
  });

  it("chooses where the phrase is said together over a lone earlier word", () => {
    const text = "budget first then later the harbour budget";
    const times = text.split(" ").map((_, i) => [i, i + 0.5] as [number, number]);
    const locator: StoredLocator = { timestamp: 0, timestamp_end: 7, source: "speech", word_times: times };
    expect(placeMatch(text, locator, queryWords("harbour budget")).locator).toMatchObject({
      timestamp: 5 - LEAD_IN_S,
      timestamp_end: 6.5,
    });
  });

  it("keeps the passage's span when its word times do not match its words (an older extraction)", () => {
    const old: StoredLocator = { timestamp: 1, timestamp_end: 9, source: "speech", word_times: [[1, 2]] };
    expect(narrowToSpans("two words", old, [{ start: 4, end: 9 }])).toEqual({
      timestamp: 1,
      timestamp_end: 9,
      source: "speech",
    });
  });
});
