import { PARAPHRASES, PARAPHRASES_DEV, type Paraphrase } from "@locus/testing";
import { dot, isZero, type Embedder } from "../src/index.ts";

/**
 * The 60 paraphrase pairs (PARAPHRASES and PARAPHRASES_DEV) and each question's cosine to each
 * statement by the engine: `similarity[q][s]`.
 */
export async function paraphraseSimilarities(
  embedder: Embedder,
): Promise<{ pairs: Paraphrase[]; similarity: number[][] }> {
  const pairs = [...PARAPHRASES, ...PARAPHRASES_DEV];
  const statements = await embedder.embed(pairs.map((p) => p.statement));
  const questions = await embedder.embed(pairs.map((p) => p.question));
  return { pairs, similarity: questions.map((q) => statements.map((s) => dot(q, s))) };
}

export interface EmbedderContractOptions {
  /**
   * Whether the engine's vectors carry meaning (a real model: the paraphrase clauses run), or only
   * shape (a stand-in server whose vectors are hashes).
   */
  meaning: boolean;
}

/**
 * What every Embedder promises its callers (the indexer, search, the summary), run against each
 * engine on its real model. Meaning: a question is nearer its own paraphrased statement than the
 * unrelated statements on average, for at least 54 of the 60 pairs (PARAPHRASES and
 * PARAPHRASES_DEV, no word in common between question and statement).
 */
export function describeEmbedderContract(
  name: string,
  load: () => Promise<Embedder>,
  options: EmbedderContractOptions,
): void {
  describe(`Embedder contract: ${name}`, () => {
    let embedder: Embedder;
    beforeAll(async () => {
      embedder = await load();
    }, 120_000);
    // An engine holding native resources (the encoder's ONNX session) lets them go.
    afterAll(() => (embedder as Embedder & { close?: () => Promise<void> }).close?.());

    it("gives one unit vector per text, in order, of the engine's dimensions, the same for the same text", async () => {
      const texts = [
        "The river flooded the valley.",
        "Invoices are due in thirty days.",
        "The river flooded the valley.",
      ];
      const vectors = await embedder.embed(texts);
      expect(vectors).toHaveLength(3);
      for (const v of vectors) {
        expect(v).toBeInstanceOf(Float32Array);
        expect(dot(v, v)).toBeCloseTo(1, 4);
        if (embedder.dimensions !== undefined) expect(v).toHaveLength(embedder.dimensions);
      }
      expect(dot(vectors[0]!, vectors[2]!)).toBeCloseTo(1, 4);
      expect(dot(vectors[0]!, vectors[1]!)).toBeLessThan(0.99);
    });

    it("names its space, and an empty list or a text with nothing to go on costs nothing and breaks nothing", async () => {
      expect(embedder.space).toMatch(/^[a-z]+:\S+$/);
      expect(await embedder.embed([])).toEqual([]);
      const [empty, real] = await embedder.embed(["", "Payment is due at the end of the month."]);
      expect(isZero(empty!)).toBe(true);
      expect(isZero(real!)).toBe(false);
    });

    it("a batch gives the vectors each text gets alone", async () => {
      const texts = PARAPHRASES.slice(0, 20).map((p) => p.statement);
      const together = await embedder.embed(texts);
      const alone = await Promise.all(texts.map(async (t) => (await embedder.embed([t]))[0]!));
      together.forEach((v, i) => expect(dot(v, alone[i]!)).toBeGreaterThan(0.999));
    });

    if (options.meaning) {
      it("a question is nearer its paraphrase than unrelated statements, for at least 54 of 60 pairs", async () => {
        const { pairs, similarity } = await paraphraseSimilarities(embedder);
        const failed = pairs.flatMap((p, i) => {
          const row = similarity[i]!;
          const others = row.filter((_, j) => j !== i);
          const unrelated = others.reduce((a, b) => a + b, 0) / others.length;
          return row[i]! > unrelated ? [] : [p.question];
        });
        expect(failed.length).toBeLessThanOrEqual(6);
      });
    }
  });
}
