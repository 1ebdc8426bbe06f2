import { JUDGE_MODEL, LocalEmbedder, loadLexicon, SentenceEncoder, type Embedder } from "@locus/embedder";
import { startFakeOpenAi } from "@locus/testing";
import { ExtractiveSummarizer, OpenAiSummarizer } from "../src/index.ts";
import { CONTRACT_PASSAGES, describeSummarizerContract, formProblems } from "./summarizer.contract.ts";

/**
 * The extractive summary as Locus builds it: sentences compared by `sentences`, words by the word
 * vectors, and the answer judge when `judged`.
 */
async function extractive(sentences: (words: LocalEmbedder) => Promise<Embedder>, judged = false) {
  const words = await LocalEmbedder.load();
  const embedder = await sentences(words);
  const judge = judged ? await SentenceEncoder.load({ model: JUDGE_MODEL }) : undefined;
  return {
    summarizer: new ExtractiveSummarizer(embedder, {
      wordWeight: (w) => words.weight(w),
      wordVector: (w) => words.wordVector(w),
      lexicon: await loadLexicon(),
      ...(judge ? { judge } : {}),
    }),
    close: async () => {
      if (embedder instanceof SentenceEncoder) await embedder.close();
      await judge?.close();
    },
  };
}

describeSummarizerContract(
  "extractive, on the word vectors",
  () => extractive((words) => Promise.resolve(words)),
  {
    judgement: true,
  },
);

describeSummarizerContract(
  "extractive, on the sentence encoder",
  () => extractive(() => SentenceEncoder.load()),
  {
    judgement: true,
  },
);

describeSummarizerContract(
  "extractive, on the sentence encoder with its answer judge (as Locus runs it)",
  () => extractive(() => SentenceEncoder.load(), true),
  {
    judgement: true,
  },
);

// A model's judgement cannot be had here: the server answers as scripted, so only the form of
// what comes back (checked by citedSummary before anyone sees it) is held to the contract.
describeSummarizerContract(
  "OpenAiSummarizer (mock: remote AI API, a local OpenAI-compatible server)",
  async () => {
    const fake = await startFakeOpenAi();
    return {
      summarizer: new OpenAiSummarizer({
        baseURL: fake.baseUrl,
        apiKey: fake.apiKey,
        model: "llama3.1",
        timeoutMs: 2_000,
        maxRetries: 0,
      }),
      close: () => fake.close(),
    };
  },
  { judgement: false },
);

describe("the contract's form check", () => {
  it("finds each way a summary can break its form", () => {
    const good = {
      text: "The refund will be paid to your card within five business days [1].",
      citations: [
        { n: 1, passage: 3, quote: "The refund will be paid to your card within five business days" },
      ],
      answered: true,
      source: "local",
    };
    expect(formProblems(good, CONTRACT_PASSAGES)).toEqual([]);
    expect(
      formProblems({ ...good, citations: [{ ...good.citations[0]!, passage: 9 }] }, CONTRACT_PASSAGES),
    ).toEqual(["citation 1 names passage 9, which was not given"]);
    expect(
      formProblems(
        { ...good, citations: [{ ...good.citations[0]!, quote: "within three days" }] },
        CONTRACT_PASSAGES,
      ),
    ).toEqual(['citation 1 quotes words passage 3 does not hold: "within three days"']);
    expect(formProblems({ ...good, text: "Paid within five business days [2]." }, CONTRACT_PASSAGES)).toEqual(
      [
        "markers not numbered in order: 2",
        "marker [2] has no citation",
        "citation 1 has no marker in the text",
      ],
    );
    expect(formProblems({ ...good, answered: false }, CONTRACT_PASSAGES)).toEqual([
      "cites passages without answering",
      `says "${good.text}" without answering`,
    ]);
  });
});
