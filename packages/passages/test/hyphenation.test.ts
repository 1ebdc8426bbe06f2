import { joinHyphenatedLines, mendBrokenWord, type Lexicon } from "../src/index.ts";

/**
 * A lexicon of a handful of words in frequency order, standing in for the English one (which
 * @locus/embedder's tests check against real breaks).
 */
function lexiconOf(...words: string[]): Lexicon {
  const ranks = new Map(words.map((w, i) => [w, i]));
  return { rank: (word) => ranks.get(word) };
}

const english = lexiconOf("the", "determine", "well-known", "known", "well", "mine", "deter", "wellknown");

describe("mendBrokenWord", () => {
  it("joins a word broken at the line end when the joined form is the common one", () => {
    expect(mendBrokenWord("deter", "mine", english)).toBe("join");
  });

  it("keeps the hyphen of a compound the lexicon knows with its hyphen", () => {
    expect(mendBrokenWord("well", "known", english)).toBe("hyphen");
  });

  it("joins a fragment it does not know, and keeps two whole words it knows as a compound", () => {
    expect(mendBrokenWord("particu", "lar", english)).toBe("join");
    expect(mendBrokenWord("mine", "well", english)).toBe("hyphen");
  });

  it("joins every break without a lexicon", () => {
    expect(mendBrokenWord("well", "known")).toBe("join");
  });
});

describe("joinHyphenatedLines", () => {
  it("brings the rest of a broken word up to the line where it starts, with its punctuation", () => {
    const lines = joinHyphenatedLines(
      [
        { text: "We deter-", number: 1 },
        { text: "mine, at last, the value", number: 2 },
      ],
      english,
    );
    expect(lines).toEqual([
      { text: "We determine,", number: 1, continues: true },
      { text: "at last, the value", number: 2 },
    ]);
  });

  it("keeps a compound's hyphen and leaves other fields of the lines alone", () => {
    const box = { x: 1, y: 2, width: 3, height: 4 };
    const lines = joinHyphenatedLines(
      [
        { text: "a well-", number: 7, bbox: box },
        { text: "known fact", number: 8, bbox: box },
      ],
      english,
    );
    expect(lines.map((l) => l.text)).toEqual(["a well-known", "fact"]);
    expect(lines[0]).toMatchObject({ number: 7, bbox: box, continues: true });
  });

  it("leaves breaks that are not words alone: a capital after, a number, a dash on its own", () => {
    const cases = [
      ["see Linux-", "Based systems"],
      ["the x86-", "64 port"],
      ["one thing -", "another"],
      ["nothing broken", "here"],
    ];
    for (const [first = "", second = ""] of cases) {
      const lines = joinHyphenatedLines(
        [
          { text: first, number: 1 },
          { text: second, number: 2 },
        ],
        english,
      );
      expect(lines.map((l) => l.text)).toEqual([first, second]);
    }
  });

  it("keeps a line emptied by the move in its place, so line numbers still count from the top", () => {
    const lines = joinHyphenatedLines(
      [
        { text: "we deter-", number: 1 },
        { text: "mine.", number: 2 },
        { text: "Next", number: 3 },
      ],
      english,
    );
    expect(lines.map((l) => [l.number, l.text])).toEqual([
      [1, "we determine."],
      [2, ""],
      [3, "Next"],
    ]);
  });

  it("does not change the lines it is given", () => {
    const given = [
      { text: "deter-", number: 1 },
      { text: "mine", number: 2 },
    ];
    joinHyphenatedLines(given, english);
    expect(given[0]?.text).toBe("deter-");
  });
});
