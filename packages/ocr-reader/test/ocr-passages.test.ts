import { buildOcrPassages, toPageBox, type OcrPage } from "../src/index.ts";

const geometry = { scale: 2, width: 2000, height: 1000, originalWidth: 1000, originalHeight: 500 };
const line = (text: string, confidence: number, y: number) => ({
  text,
  confidence,
  bbox: { x: 100, y, width: 400, height: 40 },
});

describe("OCR lines to passages", () => {
  it("drops unsure and letterless lines, then numbers the rest from the top", () => {
    const read: OcrPage = {
      rotation: 0,
      lines: [
        line("First real line", 0.95, 100),
        line("~~ ,. ~~", 0.9, 160), // no letter or digit: specks read as marks
        line("zqx vvk", 0.2, 220), // below the floor
        line("Second real line", 0.9, 280),
      ],
    };
    const [passage, ...rest] = buildOcrPassages(1, read, geometry, {
      maxLines: 5,
      maxChars: 500,
      minConfidence: 0.5,
    });
    expect(rest).toHaveLength(0);
    expect(passage?.content).toBe("First real line\nSecond real line");
    expect(passage?.locator).toMatchObject({
      page: 1,
      line: 1,
      line_end: 2,
      source: "ocr",
      confidence: 0.93,
    });
  });

  it("keeps the number of a line read just under the threshold, so the lines below keep theirs", () => {
    const read: OcrPage = {
      rotation: 0,
      lines: [
        line("fonts-conf", 0.48, 40), // a heading the recogniser is a little unsure of
        line("First body line", 0.95, 100),
        line("zqx vvk", 0.2, 160), // under half the threshold: a picture's texture, not a line
        line("Second body line", 0.9, 220),
      ],
    };
    const passages = buildOcrPassages(1, read, geometry, { maxLines: 5, maxChars: 500, minConfidence: 0.5 });
    expect(passages.map((p) => [p.content, p.locator.line, p.locator.line_end])).toEqual([
      ["First body line\nSecond body line", 2, 3],
    ]);
  });

  it("never spans a line it did not keep: each content line is its page line", () => {
    const read: OcrPage = {
      rotation: 0,
      lines: [
        line("Above the smudge", 0.95, 40),
        line("smudged words here", 0.4, 100), // counted (line 2), not kept
        line("Below the smudge", 0.9, 160),
        line("and one more", 0.9, 220),
      ],
    };
    const passages = buildOcrPassages(1, read, geometry, { maxLines: 5, maxChars: 500, minConfidence: 0.5 });
    expect(passages.map((p) => [p.content, p.locator.line, p.locator.line_end])).toEqual([
      ["Above the smudge", 1, 1],
      ["Below the smudge\nand one more", 3, 4],
    ]);
  });

  it("gives boxes in page pixels: each line's, and the one around the passage", () => {
    const read: OcrPage = { rotation: 0, lines: [line("one", 0.9, 100), line("two", 0.9, 200)] };
    const [passage] = buildOcrPassages(3, read, geometry);
    expect(passage?.locator.line_boxes).toEqual([
      { x: 50, y: 50, width: 200, height: 20 },
      { x: 50, y: 100, width: 200, height: 20 },
    ]);
    expect(passage?.locator.bbox).toEqual({ x: 50, y: 50, width: 200, height: 70 });
  });

  it("starts each passage on the last line of the one before, with at most maxLines lines", () => {
    const lines = Array.from({ length: 7 }, (_, i) => line(`line ${i + 1}`, 0.9, 100 + i * 50));
    const passages = buildOcrPassages(1, { rotation: 0, lines }, geometry, {
      maxLines: 3,
      maxChars: 500,
      minConfidence: 0.5,
    });
    expect(passages.map((p) => [p.locator.line, p.locator.line_end])).toEqual([
      [1, 3],
      [3, 5],
      [5, 7],
    ]);
  });

  it("turns boxes back by the recogniser's straightening angle", () => {
    // A box at the centre stays at the centre whatever the angle; one off-centre moves.
    const square = { scale: 1, width: 1000, height: 1000, originalWidth: 1000, originalHeight: 1000 };
    const centre = toPageBox({ x: 490, y: 490, width: 20, height: 20 }, 0.05, square);
    expect(centre.x + centre.width / 2).toBeCloseTo(500, 0);
    expect(centre.y + centre.height / 2).toBeCloseTo(500, 0);
    const right = toPageBox({ x: 890, y: 490, width: 20, height: 20 }, 0.05, square);
    // 400 px right of the centre, turned back by 0.05 rad: about 20 px off the horizontal.
    expect(Math.abs(right.y + right.height / 2 - 500)).toBeGreaterThan(15);
    expect(Math.abs(right.y + right.height / 2 - 500)).toBeLessThan(25);
  });

  it("makes words hyphenated at line ends whole on their first line, and says so for narrowing", () => {
    const read: OcrPage = {
      rotation: 0,
      lines: [line("the recogniser has to deter-", 0.9, 100), line("mine where lines end", 0.9, 200)],
    };
    const [passage] = buildOcrPassages(1, read, geometry);
    expect(passage?.content).toBe("the recogniser has to determine\nwhere lines end");
    expect(passage?.locator).toMatchObject({ line: 1, line_end: 2, line_joins: [0] });
    // Each line keeps its own box: the word's second half is still drawn on line 2.
    expect(passage?.locator.line_boxes).toHaveLength(2);
  });

  it("clips boxes to the page", () => {
    const box = toPageBox({ x: -10, y: -10, width: 3000, height: 3000 }, 0, geometry);
    expect(box).toEqual({ x: 0, y: 0, width: 1000, height: 500 });
  });
});
