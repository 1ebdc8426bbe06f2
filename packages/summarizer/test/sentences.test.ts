import { loadLexicon } from "@locus/embedder";
import type { Lexicon } from "@locus/passages";
import { breaksAfter, sentencesOf } from "../src/index.ts";

let lexicon: Lexicon;
beforeAll(async () => {
  lexicon = await loadLexicon();
}, 120_000);

describe("sentencesOf", () => {
  it("cuts a passage into sentences across its lines, and says which lines each spans", () => {
    const content = [
      "Revenue grew 3.5 percent in the quarter, e.g. in",
      "Europe and Asia. Costs fell. The board approved",
      "a dividend of ten cents per share.",
    ].join("\n");
    expect(sentencesOf(content)).toEqual([
      {
        text: "Revenue grew 3.5 percent in the quarter, e.g. in Europe and Asia.",
        firstLine: 0,
        lastLine: 1,
      },
      // "Costs fell." has two words: too little to quote.
      { text: "The board approved a dividend of ten cents per share.", firstLine: 1, lastLine: 2 },
    ]);
  });

  it("mends words hyphenated at line ends (a real manual's lines), keeping compounds' hyphens", () => {
    // libtasn1.pdf, page 4, as pdftotext reads it (lines that were indexed before words were mended).
    const content = [
      "This document describes the Libtasn1 library that provides Abstract Syntax Notation One",
      "(ASN.1, as specified by the X.680 ITU-T recommendation) parsing and structures man-",
      "agement, and Distinguished Encoding Rules (DER, as per X.690) encoding and decoding",
      "functions.",
    ].join("\n");
    const [sentence] = sentencesOf(content, lexicon);
    expect(sentence?.text).toContain("parsing and structures management, and Distinguished");
    expect(sentence).toMatchObject({ firstLine: 0, lastLine: 3 });
    expect(
      sentencesOf("The results were well-\nknown to everyone who read the report.", lexicon)[0]?.text,
    ).toBe("The results were well-known to everyone who read the report.");
  });

  it("does not run a heading or a list item into the sentence after it", () => {
    const content = [
      "8 Converting FestVox Voices",
      "As of 1.2 initial scripts have been added to aid the conversion of FestVox voices to Flite. In",
      "general the conversion cannot be automatic.",
      "The main features of this library are",
      "  • On-line ASN.1 structure management that doesn’t require any C code file generation.",
    ].join("\n");
    expect(sentencesOf(content).map((s) => s.text)).toEqual([
      "8 Converting FestVox Voices",
      "As of 1.2 initial scripts have been added to aid the conversion of FestVox voices to Flite.",
      "In general the conversion cannot be automatic.",
      "The main features of this library are",
      "• On-line ASN.1 structure management that doesn’t require any C code file generation.",
    ]);
  });
});

describe("breaksAfter", () => {
  it("breaks after a full stop, a heading or before a list, not inside a sentence", () => {
    expect(breaksAfter("functions.", "The main features", 80)).toBe(true);
    expect(breaksAfter("2.5 Future developments", "Add functions for C code", 80)).toBe(true);
    expect(breaksAfter("The main features of this library are", "  • On-line management", 80)).toBe(true);
    expect(
      breaksAfter(
        "for a voice needs to be hand converted to C to work in Flite, this can be a",
        "major task.",
        90,
      ),
    ).toBe(false);
    expect(breaksAfter("", "Anything", 80)).toBe(true);
  });
});
