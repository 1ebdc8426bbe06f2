import { readFileSync } from "node:fs";
import { join } from "node:path";
import { JUDGE_MODEL, LocalEmbedder, loadLexicon, SentenceEncoder } from "@locus/embedder";
import { ANSWER_FLOOR, ExtractiveSummarizer, NO_ANSWER, type CitablePassage } from "../src/index.ts";

/**
 * The summary's answer judge (bge-small-en-v1.5) on what ai mode really hands the summary: the ten
 * passages found for development questions about three real manuals (fixtures/manual-passages.json),
 * read by the real models as Locus builds the summary (all-MiniLM-L6-v2 for sentences, the word
 * vectors for single words).
 */
interface Fixture {
  questions: { id: string; question: string; answerable: boolean; passages: CitablePassage[] }[];
}
const fixture = JSON.parse(
  readFileSync(join(import.meta.dirname, "fixtures", "manual-passages.json"), "utf8"),
) as Fixture;
const unanswerable = fixture.questions.filter((q) => !q.answerable);
const answerable = fixture.questions.filter((q) => q.answerable);

let encoder: SentenceEncoder;
let judge: SentenceEncoder;
let alone: ExtractiveSummarizer;
let judged: ExtractiveSummarizer;
beforeAll(async () => {
  const words = await LocalEmbedder.load();
  [encoder, judge] = await Promise.all([
    SentenceEncoder.load(),
    SentenceEncoder.load({ model: JUDGE_MODEL }),
  ]);
  const options = {
    wordWeight: (w: string) => words.weight(w),
    wordVector: (w: string) => words.wordVector(w),
    lexicon: await loadLexicon(),
  };
  alone = new ExtractiveSummarizer(encoder, options);
  judged = new ExtractiveSummarizer(encoder, { ...options, judge });
}, 120_000);
afterAll(() => Promise.all([encoder.close(), judge.close()]));

describe("the answer judge (real models, real manual passages)", () => {
  it("has fixtures of both kinds", () => {
    expect(unanswerable.length).toBeGreaterThan(0);
    expect(answerable.length).toBeGreaterThan(0);
  });

  it("refuses a question the manuals only touch, which the encoder alone answers", async () => {
    for (const { question, passages } of unanswerable) {
      expect((await alone.summarize(question, passages)).answered).toBe(true);
      const summary = await judged.summarize(question, passages);
      expect(summary).toMatchObject({ answered: false, text: NO_ANSWER, citations: [] });
      const [best] = await judged.scoredSentences(question, passages, judge);
      expect(best!.score).toBeLessThan(ANSWER_FLOOR);
    }
  });

  it("lets the answers it agrees with through unchanged", async () => {
    for (const { question, passages } of answerable) {
      const summary = await judged.summarize(question, passages);
      expect(summary.answered).toBe(true);
      expect(summary).toEqual(await alone.summarize(question, passages));
    }
  });
});
