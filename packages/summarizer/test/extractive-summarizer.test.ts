import { LocalEmbedder } from "@locus/embedder";
import { ExtractiveSummarizer, NO_ANSWER, sentencesOf, type CitablePassage } from "../src/index.ts";

let embedder: LocalEmbedder;
let summarizer: ExtractiveSummarizer;
beforeAll(async () => {
  embedder = await LocalEmbedder.load();
  summarizer = new ExtractiveSummarizer(embedder);
}, 120_000);

const passage = (n: number, fileName: string, content: string): CitablePassage => ({ n, fileName, content });

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
});

describe("ExtractiveSummarizer", () => {
  const passages = [
    passage(
      1,
      "clinic.pdf",
      "Opening hours are nine to five.\nThe vaccine caused mild fever and soreness\nin the arm for about one day.",
    ),
    passage(
      2,
      "trial.pdf",
      "Most trial participants reported a headache after the injection.\nNo serious reactions were seen.",
    ),
    passage(3, "canteen.pdf", "The canteen serves soup and sandwiches at lunch.\nDesserts are on Fridays."),
    // Overlaps passage 1 (windows share a line): the same sentence must not be said twice.
    passage(
      4,
      "clinic.pdf",
      "The vaccine caused mild fever and soreness\nin the arm for about one day.\nParking is free.",
    ),
  ];

  it("answers from the sentences that answer, across files, each cited with its lines", async () => {
    const summary = await summarizer.summarize(
      "What side effects did people get from the vaccine shot?",
      passages,
    );
    expect(summary.answered).toBe(true);
    expect(summary.source).toBe("local");
    const cited = summary.citations.map((c) => c.passage);
    expect(cited).toContain(1);
    expect(cited).toContain(2);
    expect(cited).not.toContain(3);
    // Said once, though passages 1 and 4 both hold it.
    expect(summary.text.match(/The vaccine caused mild fever/g)).toHaveLength(1);
    const fever = summary.citations.find((c) => c.quote.startsWith("The vaccine caused"));
    expect(fever).toMatchObject({ passage: 1, lines: { first: 1, last: 2 } });
    // Each marker once, numbered in order, inside its sentence's full stop.
    expect(summary.citations.map((c) => c.n)).toEqual(summary.citations.map((_, i) => i + 1));
    for (const c of summary.citations)
      expect(summary.text).toContain(`${c.quote.replace(/\.$/, "")} [${c.n}].`);
  });

  it("says the documents do not answer when nothing is near the question", async () => {
    const summary = await summarizer.summarize("What is the capital of Mongolia?", passages.slice(2, 3));
    expect(summary).toEqual({ text: NO_ANSWER, citations: [], answered: false, source: "local" });
  });

  it("has nothing to say about no passages, or a question without words", async () => {
    expect((await summarizer.summarize("side effects?", [])).answered).toBe(false);
    expect((await summarizer.summarize("?!", passages)).answered).toBe(false);
  });

  it("keeps to its sentence limit", async () => {
    const short = new ExtractiveSummarizer(embedder, { maxSentences: 1 });
    const summary = await short.summarize(
      "What side effects did people get from the vaccine shot?",
      passages,
    );
    expect(summary.citations).toHaveLength(1);
  });
});
