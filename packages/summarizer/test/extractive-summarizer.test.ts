import { LocalEmbedder, loadLexicon } from "@locus/embedder";
import { ANSWER_FLOOR, ExtractiveSummarizer, NO_ANSWER, type CitablePassage } from "../src/index.ts";

let embedder: LocalEmbedder;
let summarizer: ExtractiveSummarizer;
beforeAll(async () => {
  embedder = await LocalEmbedder.load();
  summarizer = new ExtractiveSummarizer(embedder, {
    wordWeight: (w) => embedder.weight(w),
    wordVector: (w) => embedder.wordVector(w),
    lexicon: await loadLexicon(),
  });
}, 120_000);

const passage = (n: number, fileName: string, lines: readonly string[]): CitablePassage => ({
  n,
  fileName,
  fileId: `id-of-${fileName}`,
  content: lines.join("\n"),
});

// Real passages: lines of the manuals in bench/fixtures/quality (pdftotext -layout), in windows of
// five lines sharing one, as Locus indexes them.
const libtasn1Features = passage(1, "libtasn1.pdf", [
  "  • Distinguished Encoding Rules (DER) encoding support.",
  "  • No limits for INTEGER and ENUMERATED values.",
  "  • It’s Free Software. Anybody can use, modify, and redistribute the library under the",
  "    terms of the GNU Lesser General Public License version 2.1 or later. The command",
  "    line tools, self-tests and build infrastructure are licensed under the GNU General Public",
]);
const libtasn1Install = passage(2, "libtasn1.pdf", [
  "The library uses the GNU autotools. To build and install it, type ./configure, then make",
  "and make install. The self-tests run with make check, and the manual is built with",
  "texinfo. See the INSTALL file for the options configure accepts.",
]);
const fliteConversion = passage(3, "flite.pdf", [
  "   Simple conversion scripts are given as examples of the stages you need to go through.",
  "These are designed to work on standard (English) diphone sets, and simple limited domain",
  "voices. The conversion technique will almost certainly fail for large unit selection voices",
  "due to limitations in the C compiler (more discussion below). In 1.4 we have also added",
  "support for converting clustergen voices too (which is a little easier, see section below).",
]);
const fontconfigTable = passage(4, "fontconfig-user.pdf", [
  "prgname          String    String Name of the running program",
  "fontformat       String    String Format of the font. This is useful for determining",
  "postscriptname   String    Font family name in PostScript",
  "fontfeatures     String    List of the feature tags in OpenType to be enabled",
]);
const all = [libtasn1Features, libtasn1Install, fliteConversion, fontconfigTable];

describe("ExtractiveSummarizer", () => {
  it("answers with the sentence that answers, whole, not the installation notes around it", async () => {
    const summary = await summarizer.summarize(
      "Which licences can I use the library under?",
      [libtasn1Install, libtasn1Features, fontconfigTable].map((p, i) => ({ ...p, n: i + 1 })),
    );
    expect(summary.answered).toBe(true);
    expect(summary.source).toBe("local");
    const [first] = summary.citations;
    expect(first).toMatchObject({ n: 1, passage: 2 });
    expect(first?.quote).toBe(
      "Anybody can use, modify, and redistribute the library under the terms of the GNU Lesser General Public License version 2.1 or later.",
    );
    // Cited on the lines it spans in its passage.
    expect(first?.lines).toEqual({ first: 2, last: 3 });
    expect(summary.text.startsWith("Anybody can use, modify, and redistribute the library")).toBe(true);
    expect(summary.text).not.toMatch(/configure|String String/);
  });

  it("says a sentence that points back together with the one before it", async () => {
    const summary = await summarizer.summarize(
      "What kinds of voices are the simple conversion scripts designed for?",
      all,
    );
    expect(summary.answered).toBe(true);
    expect(summary.citations[0]?.quote).toBe(
      "Simple conversion scripts are given as examples of the stages you need to go through. These are designed to work on standard (English) diphone sets, and simple limited domain voices.",
    );
    expect(summary.citations[0]).toMatchObject({ passage: 3, lines: { first: 0, last: 2 } });
  });

  it("cites a sentence found in two files once, with both places", async () => {
    const notice = [
      "Permission is granted to copy, distribute and/or modify this document under the terms of",
      "the GNU Free Documentation License, Version 1.3 or any later version.",
    ];
    const summary = await summarizer.summarize("Under which license may I copy this document?", [
      passage(1, "manual-a.pdf", notice),
      passage(2, "manual-b.pdf", ["Preface.", ...notice]),
      fliteConversion,
    ]);
    expect(summary.answered).toBe(true);
    const first = summary.citations.filter((c) => c.n === 1);
    expect(first.map((c) => [c.passage, c.lines])).toEqual([
      [1, { first: 0, last: 1 }],
      [2, { first: 1, last: 2 }],
    ]);
    expect(summary.text.match(/Permission is granted/g)).toHaveLength(1);
    expect(summary.text).toContain("Version 1.3 or any later version [1].");
  });

  it("draws on each file when the answer is spread over several", async () => {
    const refund = passage(1, "returns.pdf", [
      "The refund will be paid to your card within five business days after the returned item",
      "reaches our warehouse.",
    ]);
    const expenses = passage(2, "expenses.pdf", [
      "Please submit your expense receipts to the finance department by Friday.",
    ]);
    for (const question of [
      "How are refunds paid and when are expense receipts due?",
      // "expense receipts" matches more of this one: the refund sentence scores well below the
      // best, and is said because it answers the part of the question the best one does not.
      "How do refunds and expense receipts work?",
    ]) {
      const summary = await summarizer.summarize(question, [refund, expenses, fliteConversion]);
      expect(summary.answered).toBe(true);
      expect([question, new Set(summary.citations.map((c) => c.passage))]).toEqual([
        question,
        new Set([1, 2]),
      ]);
      // Each marker once, numbered in order, inside its sentence's full stop.
      expect(summary.citations.map((c) => c.n)).toEqual([1, 2]);
      for (const c of summary.citations)
        expect(summary.text).toContain(`${c.quote.replace(/\.$/, "")} [${c.n}].`);
    }
  });

  it("says the documents do not answer a question they do not touch (real manual passages)", async () => {
    for (const question of [
      "How do I make a sourdough starter from scratch?",
      "What is the fastest train from Paris to London?",
      "How do I convert a TrueType font to WOFF2 for a website?",
    ]) {
      const [best] = await summarizer.scoredSentences(question, all);
      expect(best?.score ?? 0).toBeLessThan(ANSWER_FLOOR);
      const summary = await summarizer.summarize(question, all);
      expect([question, summary]).toEqual([
        question,
        { text: NO_ANSWER, citations: [], answered: false, source: "local" },
      ]);
    }
  });

  it("puts a prose sentence above table rows that share its words", async () => {
    const prose = passage(2, "fonts.pdf", [
      "The PostScript name of a font is the name a printer knows it by; fontconfig reads it from the font.",
    ]);
    const scored = await summarizer.scoredSentences("What is the PostScript name of a font?", [
      fontconfigTable,
      prose,
    ]);
    expect(scored[0]?.text).toBe(prose.content);
    for (const s of scored.filter((s) => s.places[0]?.passage === 4))
      expect(s.parts.notProse).toBeGreaterThan(0);
  });

  it("has nothing to say about no passages, or a question without words", async () => {
    expect((await summarizer.summarize("side effects?", [])).answered).toBe(false);
    expect((await summarizer.summarize("?!", all)).answered).toBe(false);
  });

  it("keeps to its sentence limit", async () => {
    const short = new ExtractiveSummarizer(embedder, { maxSentences: 1, minRelevance: 0 });
    const summary = await short.summarize("How are refunds paid and when are expense receipts due?", [
      passage(1, "returns.pdf", ["The refund will be paid to your card within five business days."]),
      passage(2, "expenses.pdf", [
        "Expense receipts are due to the accounting team by the fifth working day.",
      ]),
    ]);
    expect(new Set(summary.citations.map((c) => c.n))).toEqual(new Set([1]));
  });
});
