import { normaliseScore, queryTerms } from "../src/search-index.ts";

describe("queryTerms", () => {
  it("splits text into lower-case runs of letters and digits", () => {
    expect(queryTerms("Quarterly Revenue 2024, Q3!")).toEqual(["quarterly", "revenue", "2024", "q3"]);
  });

  it("drops duplicates, keeping first-seen order", () => {
    expect(queryTerms("tea Tea TEA coffee tea")).toEqual(["tea", "coffee"]);
  });

  it("turns quotes, operators, brackets and field syntax into separators", () => {
    expect(queryTerms('"unbalanced')).toEqual(["unbalanced"]);
    expect(queryTerms("col:value")).toEqual(["col", "value"]);
    expect(queryTerms("NEAR(a b)")).toEqual(["near", "a", "b"]);
    expect(queryTerms("'; DROP TABLE passages; --")).toEqual(["drop", "table", "passages"]);
    expect(queryTerms("revenue* -growth +profit ^x {a}")).toEqual(["revenue", "growth", "profit", "x", "a"]);
  });

  it("keeps FTS operator words as plain lower-case words", () => {
    expect(queryTerms("AND OR NOT")).toEqual(["and", "or", "not"]);
  });

  it("returns no terms for empty, blank, punctuation-only or emoji-only text", () => {
    for (const text of [
      "",
      "   ",
      "\n\t",
      "!!!",
      "...,;:?!@#$%^&*()[]{}<>/\\|`~",
      "🚀📈🤖",
      "\u200b",
      "\u0000",
    ]) {
      expect(queryTerms(text)).toEqual([]);
    }
  });

  it("keeps the words around emoji", () => {
    expect(queryTerms("🚀launch📈growth")).toEqual(["launch", "growth"]);
  });

  it("keeps letters of every script", () => {
    expect(queryTerms("Straße café 東京 Москва")).toEqual(["straße", "café", "東京", "москва"]);
  });

  it("normalises compatibility forms (NFKC): full-width letters and ligatures", () => {
    expect(queryTerms("ｒｅｖｅｎｕｅ")).toEqual(["revenue"]);
    expect(queryTerms("ﬁnance")).toEqual(["finance"]);
    // A decomposed é (e + combining accent) becomes the composed letter, not a split word.
    expect(queryTerms("cafe\u0301")).toEqual(["café"]);
  });

  it("keeps at most 32 terms by default, and at most `max` when given", () => {
    const text = Array.from({ length: 100 }, (_, i) => `w${i}`).join(" ");
    const terms = queryTerms(text);
    expect(terms).toHaveLength(32);
    expect(terms[0]).toBe("w0");
    expect(terms[31]).toBe("w31");
    expect(queryTerms(text, 3)).toEqual(["w0", "w1", "w2"]);
  });

  it("handles a very long single word", () => {
    expect(queryTerms("x".repeat(1000))).toEqual(["x".repeat(1000)]);
  });
});

describe("normaliseScore", () => {
  it("maps s to s / (1 + s)", () => {
    expect(normaliseScore(1)).toBe(0.5);
    expect(normaliseScore(3)).toBe(0.75);
    expect(normaliseScore(0.25)).toBeCloseTo(0.2);
  });

  it("maps zero, negative and NaN scores to 0", () => {
    expect(normaliseScore(0)).toBe(0);
    expect(normaliseScore(-5)).toBe(0);
    expect(normaliseScore(Number.NaN)).toBe(0);
  });

  it("stays below 1 for large scores", () => {
    for (const raw of [10, 1e3, 1e6, 1e12]) {
      const score = normaliseScore(raw);
      expect(score).toBeGreaterThan(0);
      expect(score).toBeLessThan(1);
    }
  });

  it("preserves order: a higher raw score never gives a lower normalised score", () => {
    const raws = [0, 1e-6, 0.01, 0.5, 1, 2, 7.5, 40, 1e4];
    const scores = raws.map(normaliseScore);
    for (let i = 1; i < scores.length; i++) expect(scores[i]!).toBeGreaterThan(scores[i - 1]!);
  });
});
