import { buildLines, type TextPiece } from "../src/lines.ts";

/** A piece of text at (x, y) whose width is 5 units per character at font size 10. */
const piece = (text: string, x: number, y: number, height = 10): TextPiece => ({
  text,
  x,
  y,
  width: text.length * 5,
  height,
});

describe("buildLines", () => {
  it("returns no lines for no pieces", () => {
    expect(buildLines([])).toEqual([]);
  });

  it("joins pieces on one baseline left to right, with a space at a visible gap", () => {
    // "Hello" ends at x=35; "world" starts 5 units later (half the font size).
    expect(buildLines([piece("Hello", 10, 700), piece("world", 40, 700)])).toEqual([
      { text: "Hello world", number: 1 },
    ]);
  });

  it("orders pieces by x, whatever order they arrive in", () => {
    const lines = buildLines([piece("third", 200, 500), piece("first", 10, 500), piece("second", 100, 500)]);
    expect(lines).toEqual([{ text: "first second third", number: 1 }]);
  });

  it("joins touching pieces without a space (a word split into runs)", () => {
    // "Reve" ends at x=30, "nue" starts at x=30.5: a gap under 0.15 of the font size.
    expect(buildLines([piece("Reve", 10, 600), piece("nue", 30.5, 600)])).toEqual([
      { text: "Revenue", number: 1 },
    ]);
  });

  it("does not double a space a piece already carries", () => {
    expect(buildLines([piece("Hello ", 10, 600), piece("world", 60, 600)])).toEqual([
      { text: "Hello world", number: 1 },
    ]);
    expect(buildLines([piece("Hello", 10, 600), piece(" world", 60, 600)])).toEqual([
      { text: "Hello world", number: 1 },
    ]);
  });

  it("collapses runs of whitespace inside a line and trims its ends", () => {
    expect(buildLines([piece("  many    spaces\there  ", 10, 600)])).toEqual([
      { text: "many spaces here", number: 1 },
    ]);
  });

  it("puts rows top to bottom: higher baselines (PDF y grows upwards) come first", () => {
    const lines = buildLines([piece("bottom", 10, 100), piece("top", 10, 700), piece("middle", 10, 400)]);
    expect(lines).toEqual([
      { text: "top", number: 1 },
      { text: "middle", number: 2 },
      { text: "bottom", number: 3 },
    ]);
  });

  it("keeps a slightly raised or lowered piece (superscript, mixed fonts) on its line", () => {
    const lines = buildLines([piece("E = mc", 10, 500), piece("2", 41, 503, 7), piece("next line", 10, 485)]);
    expect(lines.map((l) => l.text)).toEqual(["E = mc2", "next line"]);
  });

  it("separates lines set closer than a font size apart but further than half of one", () => {
    const lines = buildLines([piece("upper", 10, 500), piece("lower", 10, 493)]);
    expect(lines.map((l) => l.text)).toEqual(["upper", "lower"]);
  });

  it("drops empty and whitespace-only pieces, and rows made only of them", () => {
    const lines = buildLines([
      piece("", 10, 700),
      piece("   ", 10, 650),
      piece("first", 10, 600),
      piece("\t", 200, 600),
      piece(" ", 10, 550),
      piece("second", 10, 500),
    ]);
    expect(lines).toEqual([
      { text: "first", number: 1 },
      { text: "second", number: 2 },
    ]);
  });

  it("numbers lines from 1, counting only non-empty lines", () => {
    const pieces: TextPiece[] = [];
    for (let i = 0; i < 40; i++) {
      const y = 800 - i * 15;
      // Every third row is blank: it must not take a number.
      pieces.push(piece(i % 3 === 2 ? "  " : `row ${i}`, 72, y));
    }
    const lines = buildLines(pieces);
    expect(lines.map((l) => l.number)).toEqual(Array.from({ length: lines.length }, (_, i) => i + 1));
    expect(lines).toHaveLength(27);
    expect(lines[0]?.text).toBe("row 0");
    expect(lines[2]?.text).toBe("row 3");
  });

  it("builds each row separately when two columns share baselines", () => {
    const lines = buildLines([
      piece("left one", 50, 700),
      piece("right one", 300, 700),
      piece("left two", 50, 685),
      piece("right two", 300, 685),
    ]);
    expect(lines).toEqual([
      { text: "left one right one", number: 1 },
      { text: "left two right two", number: 2 },
    ]);
  });

  it("does not change the pieces it is given", () => {
    const pieces = [piece("b", 100, 500), piece("a", 10, 700)];
    const copy = pieces.map((p) => ({ ...p }));
    buildLines(pieces);
    expect(pieces).toEqual(copy);
  });
});
