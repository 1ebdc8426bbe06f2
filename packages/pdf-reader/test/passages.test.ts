import type { ExtractedPassage } from "@locus/contracts";
import type { TextLine } from "../src/lines.ts";
import { buildPassages, DEFAULT_PASSAGE_OPTIONS, type PassageOptions } from "../src/passages.ts";

const numbered = (texts: readonly string[]): TextLine[] => texts.map((text, i) => ({ text, number: i + 1 }));

const shortLines = (count: number) =>
  numbered(Array.from({ length: count }, (_, i) => `line ${i + 1} says something`));

/** A deterministic mix of line lengths, some far longer than maxChars. */
function mixedLines(count: number, maxChars: number): TextLine[] {
  const words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"];
  return numbered(
    Array.from({ length: count }, (_, i) => {
      const wordCount = i % 7 === 3 ? Math.ceil((maxChars * 2.3) / 6) : ((i * 5) % 13) + 1;
      return Array.from({ length: wordCount }, (_, w) => `${words[(i + w) % words.length]}${i}`).join(" ");
    }),
  );
}

/** Checks every promise buildPassages makes about one page's passages. */
function expectWellFormed(
  page: number,
  lines: readonly TextLine[],
  passages: ExtractedPassage[],
  options: PassageOptions,
) {
  const textOf = new Map(lines.map((l) => [l.number, l.text]));
  let previous: ExtractedPassage | undefined;
  for (const passage of passages) {
    const { locator, content } = passage;
    expect(locator.page).toBe(page);
    expect(locator.source).toBe("text");
    expect(locator.line).toBeGreaterThanOrEqual(1);
    expect(locator.line_end).toBeGreaterThanOrEqual(locator.line!);
    expect(content.length).toBeGreaterThan(0);
    expect(content.length).toBeLessThanOrEqual(options.maxChars);

    // Content line n is (part of) page line `line + n`, one content line per page line.
    const contentLines = content.split("\n");
    expect(contentLines.length).toBeLessThanOrEqual(options.maxLines);
    expect(contentLines).toHaveLength(locator.line_end! - locator.line! + 1);
    contentLines.forEach((text, n) => {
      expect(textOf.get(locator.line! + n)).toContain(text);
    });

    if (previous) {
      // Reading order, and no page line skipped between neighbours.
      expect(locator.line).toBeGreaterThanOrEqual(previous.locator.line!);
      expect(locator.line).toBeLessThanOrEqual(previous.locator.line_end! + 1);
    }
    previous = passage;
  }

  // Every word of every line is in a passage that points at that line.
  for (const line of lines) {
    const covering = passages.filter(
      (p) => p.locator.line! <= line.number && line.number <= p.locator.line_end!,
    );
    expect(covering.length).toBeGreaterThan(0);
    const words = covering.flatMap((p) => p.content.split("\n")[line.number - p.locator.line!]!.split(" "));
    for (const word of line.text.split(" ")) expect(words).toContain(word);
  }
}

describe("buildPassages", () => {
  it("returns no passages for a page without lines", () => {
    expect(buildPassages(1, [])).toEqual([]);
  });

  it("puts a few short lines into one passage with the page and line range", () => {
    expect(buildPassages(4, numbered(["first line", "second line", "third line"]))).toEqual([
      {
        content: "first line\nsecond line\nthird line",
        locator: { page: 4, line: 1, line_end: 3, source: "text" },
      },
    ]);
  });

  it("uses 5 lines and 500 characters by default", () => {
    expect(DEFAULT_PASSAGE_OPTIONS).toEqual({ maxLines: 5, maxChars: 500 });
    const passages = buildPassages(1, shortLines(12));
    expect(passages.map((p) => [p.locator.line, p.locator.line_end])).toEqual([
      [1, 5],
      [5, 9],
      [9, 12],
    ]);
  });

  it("starts each passage on the last line of the one before (one line of overlap)", () => {
    const lines = shortLines(23);
    const passages = buildPassages(2, lines, { maxLines: 4, maxChars: 500 });
    for (let i = 1; i < passages.length; i++) {
      const before = passages[i - 1]!;
      const after = passages[i]!;
      expect(after.locator.line).toBe(before.locator.line_end);
      expect(after.content.split("\n")[0]).toBe(before.content.split("\n").at(-1));
    }
    expect(passages.at(-1)?.locator.line_end).toBe(23);
    expectWellFormed(2, lines, passages, { maxLines: 4, maxChars: 500 });
  });

  it("a phrase broken across two lines is whole in at least one passage", () => {
    const lines = numbered(
      Array.from({ length: 20 }, (_, i) =>
        i === 4 ? "the quarterly" : i === 5 ? "revenue grew" : `filler ${i}`,
      ),
    );
    const passages = buildPassages(1, lines, { maxLines: 5, maxChars: 500 });
    expect(passages.some((p) => p.content.includes("the quarterly\nrevenue grew"))).toBe(true);
  });

  it("respects maxLines", () => {
    for (const maxLines of [1, 2, 3, 7]) {
      const lines = shortLines(30);
      const passages = buildPassages(1, lines, { maxLines, maxChars: 10_000 });
      for (const p of passages) expect(p.content.split("\n").length).toBeLessThanOrEqual(maxLines);
      expectWellFormed(1, lines, passages, { maxLines, maxChars: 10_000 });
    }
  });

  it("respects maxChars by ending a passage early", () => {
    const lines = numbered(
      Array.from({ length: 10 }, (_, i) => `${String(i + 1).padStart(2, "0")} ${"x".repeat(37)}`),
    ); // 40 chars
    const options = { maxLines: 5, maxChars: 100 };
    const passages = buildPassages(1, lines, options);
    // Two 40-char lines and a newline make 81; a third would make 122.
    for (const p of passages) expect(p.locator.line_end! - p.locator.line!).toBe(1);
    expectWellFormed(1, lines, passages, options);
  });

  it("splits a line longer than maxChars at spaces, every piece pointing at that line", () => {
    const words = Array.from({ length: 200 }, (_, i) => `word${i}`);
    const long = words.join(" ");
    const lines = numbered(["before", long, "after"]);
    const options = { maxLines: 5, maxChars: 120 };
    const passages = buildPassages(3, lines, options);
    const onLong = passages.filter((p) => p.locator.line! <= 2 && 2 <= p.locator.line_end!);
    expect(onLong.length).toBeGreaterThanOrEqual(Math.ceil(long.length / 120));
    // No word is cut in two.
    const seen = onLong.flatMap((p) => p.content.split("\n")[2 - p.locator.line!]!.split(" "));
    for (const w of words) expect(seen).toContain(w);
    for (const w of seen) expect(words).toContain(w);
    expectWellFormed(3, lines, passages, options);
  });

  it("cuts a long line without spaces at maxChars", () => {
    const lines = numbered(["y".repeat(250)]);
    const passages = buildPassages(1, lines, { maxLines: 5, maxChars: 100 });
    expect(passages.map((p) => p.content.length)).toEqual([100, 100, 50]);
    expect(passages.every((p) => p.locator.line === 1 && p.locator.line_end === 1)).toBe(true);
    expect(passages.map((p) => p.content).join("")).toBe("y".repeat(250));
  });

  it("rejoins pieces of one long line with a space inside a passage, keeping one content line per page line", () => {
    const lines = numbered(["aaa bbb ccc ddd eee fff", "next"]);
    const options = { maxLines: 5, maxChars: 12 };
    const passages = buildPassages(1, lines, options);
    expectWellFormed(1, lines, passages, options);
    expect(passages.at(-1)?.locator.line_end).toBe(2);
  });

  it("keeps every promise across many shapes of page", () => {
    for (const options of [
      { maxLines: 5, maxChars: 500 },
      { maxLines: 3, maxChars: 80 },
      { maxLines: 8, maxChars: 200 },
      { maxLines: 1, maxChars: 60 },
      { maxLines: 2, maxChars: 40 },
    ]) {
      for (const count of [1, 2, 9, 41]) {
        const lines = mixedLines(count, options.maxChars);
        expectWellFormed(7, lines, buildPassages(7, lines, options), options);
      }
    }
  });
});
