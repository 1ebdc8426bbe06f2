import {
  matchedWords,
  queryWords,
  sentenceSpans,
  singular,
  stem,
  toCodePoints,
  windowJoins,
} from "../src/index.ts";

const slices = (text: string, spans: readonly { start: number; end: number }[]) =>
  spans.map((s) => text.slice(s.start, s.end));

describe("stem", () => {
  it("stems English words as SQLite's porter tokenizer does, and leaves numbers and other scripts", () => {
    expect(stem("revenues")).toBe(stem("revenue"));
    expect(stem("determine")).not.toBe(stem("deter"));
    expect(stem("2024")).toBe("2024");
    expect(stem("संख्या")).toBe("संख्या");
  });
});

describe("matchedWords", () => {
  it("finds the query's words by their stems, case and width folded, and skips stop words", () => {
    const text = "The Revenues of the HARBOUR rose; ｒｅｖｅｎｕｅ fell.";
    const found = matchedWords(text, queryWords("the harbour revenue"));
    expect(slices(text, found)).toEqual(["Revenues", "HARBOUR", "ｒｅｖｅｎｕｅ"]);
  });

  it("marks only words with a query term, never words that merely start alike (every index matches by terms)", () => {
    const text = "the harbinger of the harbour, harbours and Harbourside";
    expect(slices(text, matchedWords(text, queryWords("harbour")))).toEqual(["harbour", "harbours"]);
  });

  it("prefers the form typed: of two words one stem joins, only the one asked for is marked where the text has it", () => {
    // Porter stems both to "respect"; a reader keeps them apart.
    expect(stem("respectable")).toBe(stem("respectively"));
    const both = "figures 3 and 4 respectively; a respectable Respectable margin";
    expect(slices(both, matchedWords(both, queryWords("respectable")))).toEqual([
      "respectable",
      "Respectable",
    ]);
    expect(slices(both, matchedWords(both, queryWords("respectively")))).toEqual(["respectively"]);
    // A text with only the other form was still found by it, and shows why.
    const other = "figures 3 and 4 respectively";
    expect(slices(other, matchedWords(other, queryWords("respectable")))).toEqual(["respectively"]);
    // A plural is the same word; each query word decides for its own stem.
    const mixed = "the Harbours budget, harboured, respectively and respectables";
    expect(slices(mixed, matchedWords(mixed, queryWords("harbour respectable")))).toEqual([
      "Harbours",
      "respectables",
    ]);
    expect(slices(mixed, matchedWords(mixed, queryWords("harbouring")))).toEqual(["Harbours", "harboured"]);
  });

  it("reduces plurals only (Harman's S-stemmer)", () => {
    expect(["queries", "boxes", "harbours", "bus", "glass", "toes"].map(singular)).toEqual([
      "query",
      "boxe",
      "harbour",
      "bus",
      "glass",
      "toe",
    ]);
  });

  it("folds diacritics as the indexes do: a query without accents marks the accented word", () => {
    const text = "Le café du coin, résumé naïve";
    expect(slices(text, matchedWords(text, queryWords("cafe resume")))).toEqual(["café", "résumé"]);
  });

  it("finds nothing in a passage without the words", () => {
    expect(matchedWords("nothing relevant here", queryWords("harbour"))).toEqual([]);
  });
});

describe("toCodePoints", () => {
  it("counts code points, so an emoji before a match counts once (as Python indexes strings)", () => {
    const text = "😀 harbour";
    const [span] = toCodePoints(text, matchedWords(text, queryWords("harbour")));
    expect(span).toEqual({ start: 2, end: 9 });
    expect(Array.from(text).slice(span?.start, span?.end).join("")).toBe("harbour");
  });
});

describe("sentenceSpans", () => {
  it("cuts after sentence punctuation, across line breaks, and cuts long unpunctuated speech", () => {
    const text = "The harbour opens at dawn. Ships wait\noutside the wall! Why?";
    expect(slices(text, sentenceSpans(text))).toEqual([
      "The harbour opens at dawn.",
      "Ships wait\noutside the wall!",
      "Why?",
    ]);
    const speech = Array.from({ length: 60 }, (_, i) => `w${i}`).join(" ");
    const pieces = sentenceSpans(speech, 25);
    expect(pieces).toHaveLength(3);
    expect(slices(speech, pieces).join(" ")).toBe(speech);
  });
});

describe("windowJoins", () => {
  it("names the content lines that go on to the next line of the same window", () => {
    expect(
      windowJoins([
        { text: "a deter-", number: 4, continues: true },
        { text: "mine b", number: 5 },
        { text: "last", number: 6, continues: true },
      ]),
    ).toEqual([0]);
    expect(windowJoins([{ text: "x", number: 1 }])).toBeUndefined();
  });
});
