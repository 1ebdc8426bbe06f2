import { foldDiacritics, indexTerms, MAX_TERM_LENGTH, queryTerms, termOf, words } from "../src/index.ts";

describe("queryTerms", () => {
  it("splits text into lower-case runs of letters and digits, Porter-stemmed", () => {
    expect(queryTerms("Quarterly Revenues 2024, Q3!")).toEqual(["quarterli", "revenu", "2024", "q3"]);
  });

  it("drops stop words, unless the query has only those", () => {
    expect(queryTerms("the growth of the revenue")).toEqual(["growth", "revenu"]);
    expect(queryTerms("to be or not to be")).toEqual(["to", "be", "or", "not"]);
  });

  it("drops duplicates, keeping first-seen order", () => {
    expect(queryTerms("tea Tea TEA coffee tea")).toEqual(["tea", "coffe"]);
    // Two words with one stem are one term.
    expect(queryTerms("connect connected connections")).toEqual(["connect"]);
  });

  it("turns quotes, operators, brackets and field syntax into separators", () => {
    expect(queryTerms('"unbalanced')).toEqual(["unbalanc"]);
    expect(queryTerms("col:value")).toEqual(["col", "valu"]);
    expect(queryTerms("NEAR(a b)")).toEqual(["near", "b"]);
    expect(queryTerms("'; DROP TABLE passages; --")).toEqual(["drop", "tabl", "passag"]);
    expect(queryTerms("revenue* -growth +profit ^x {a}")).toEqual(["revenu", "growth", "profit", "x"]);
  });

  it("keeps FTS operator words as plain lower-case words", () => {
    expect(queryTerms("AND OR NOT")).toEqual(["and", "or", "not"]);
    expect(queryTerms("NEAR MATCH")).toEqual(["near", "match"]);
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

  it("keeps letters of every script, Latin ones without their diacritics", () => {
    expect(queryTerms("Straße café 東京 Москва")).toEqual(["straße", "cafe", "東京", "москва"]);
    // Marks that belong to a script (Devanagari vowel signs, Cyrillic й) stay.
    expect(queryTerms("हिन्दी йогурт")).toEqual(["हिन्दी", "йогурт"]);
  });

  it("normalises compatibility forms (NFKC): full-width letters and ligatures", () => {
    expect(queryTerms("ｒｅｖｅｎｕｅ")).toEqual(["revenu"]);
    expect(queryTerms("ﬁnance")).toEqual(["financ"]);
    // A decomposed é (e + combining accent) is one word, folded like the composed letter.
    expect(queryTerms("cafe\u0301")).toEqual(["cafe"]);
  });

  it("keeps at most 32 terms by default, and at most `max` when given", () => {
    const text = Array.from({ length: 100 }, (_, i) => `w${i}`).join(" ");
    const terms = queryTerms(text);
    expect(terms).toHaveLength(32);
    expect(terms[0]).toBe("w0");
    expect(terms[31]).toBe("w31");
    expect(queryTerms(text, 3)).toEqual(["w0", "w1", "w2"]);
  });

  it("leaves out words too long to be a term in every engine", () => {
    expect(queryTerms("x".repeat(1000))).toEqual([]);
    expect(queryTerms(`${"x".repeat(MAX_TERM_LENGTH + 1)} harbour`)).toEqual(["harbour"]);
    expect(queryTerms("x".repeat(MAX_TERM_LENGTH))).toEqual(["x".repeat(MAX_TERM_LENGTH)]);
  });
});

describe("indexTerms", () => {
  it("gives every word's term in order, repeats kept, stop words kept", () => {
    expect(indexTerms("The harbours, the Harbour and the café.")).toEqual([
      "the",
      "harbour",
      "the",
      "harbour",
      "and",
      "the",
      "cafe",
    ]);
  });

  it("stems a word the same wherever it stands (no prefix or context changes it)", () => {
    for (const word of ["sing", "bed", "being", "generously", "dying", "relational"]) {
      expect(indexTerms(`x ${word} y`)[1]).toBe(termOf(word));
      expect(queryTerms(word)).toEqual([termOf(word)]);
    }
    // Porter's rules, as the original algorithm has them: "sing" keeps its "ing".
    expect(termOf("sing")).toBe("sing");
    expect(termOf("singing")).toBe("sing");
    expect(termOf("bed")).toBe("bed");
  });
});

describe("foldDiacritics", () => {
  it("drops marks on Latin letters only", () => {
    expect(foldDiacritics("résumé")).toBe("resume");
    expect(foldDiacritics("naïve")).toBe("naive");
    expect(foldDiacritics("हिन्दी")).toBe("हिन्दी");
    expect(foldDiacritics("plain")).toBe("plain");
  });
});

describe("words", () => {
  it("cuts ASCII text (read on a fast path) as the Unicode rules cut it", () => {
    // Every printable ASCII character, and controls, between and inside words.
    const ascii = Array.from({ length: 128 }, (_, i) => String.fromCharCode(i)).join("");
    const text = `Valgrind's --tool=memcheck (v3.19) reads 0x1F_ab; "QUOTED" words\t${ascii} end`;
    const unicode = text
      .normalize("NFKC")
      .toLowerCase()
      .match(/[\p{L}\p{M}\p{N}]+/gu);
    expect(words(text)).toEqual(unicode);
    expect(words(text)).toEqual([
      "valgrind",
      "s",
      "tool",
      "memcheck",
      "v3",
      "19",
      "reads",
      "0x1f",
      "ab",
      "quoted",
      "words",
      "0123456789",
      "abcdefghijklmnopqrstuvwxyz",
      "abcdefghijklmnopqrstuvwxyz",
      "end",
    ]);
    expect(words("")).toEqual([]);
    expect(words("-- ** --")).toEqual([]);
  });

  it("normalises and cuts text beyond ASCII by the Unicode rules", () => {
    expect(words("Ｆｕｌｌ-width ﬁle café naïve Straße नमस्ते 42")).toEqual([
      "full",
      "width",
      "file",
      "café",
      "naïve",
      "straße",
      "नमस्ते",
      "42",
    ]);
  });
});
