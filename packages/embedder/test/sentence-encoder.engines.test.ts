import { copyFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  DEFAULT_MODELS_DIR,
  dot,
  JUDGE_MODEL,
  ModelUnavailableError,
  SENTENCE_MODEL,
  SentenceEncoder,
} from "../src/index.ts";
import { describeEmbedderContract, paraphraseSimilarities } from "./embedder.contract.ts";

/**
 * The sentence encoder on its real model, as `pnpm install` fetched it (pinned, checked by hash).
 * Not skipped when the model is missing: CI installs it, and a missing model there is a failure.
 */
describeEmbedderContract(
  "the sentence encoder (all-MiniLM-L6-v2, real model)",
  () => SentenceEncoder.load(),
  {
    meaning: true,
  },
);

describeEmbedderContract(
  "the answer judge (bge-small-en-v1.5, real model)",
  () => SentenceEncoder.load({ model: JUDGE_MODEL }),
  {
    meaning: true,
  },
);

describe("the sentence encoder", () => {
  let encoder: SentenceEncoder;
  beforeAll(async () => {
    encoder = await SentenceEncoder.load();
  });
  afterAll(() => encoder.close());

  it("puts every one of the 60 questions nearest its own statement among all 60 (no word in common)", async () => {
    const { pairs, similarity } = await paraphraseSimilarities(encoder);
    const misplaced = pairs.filter((_, i) =>
      similarity[i]!.some((s, j) => j !== i && s >= similarity[i]![i]!),
    );
    expect(misplaced.map((p) => p.question)).toEqual([]);
  });

  it("reads a passage longer than the model's 256 word pieces by its start, without failing", async () => {
    const start = "Backups are copied to the second data centre every night at two o'clock.";
    const long = `${start} ${"Unrelated filler about the weather in the mountains. ".repeat(60)}`;
    const [whole, head] = await encoder.embed([long, start]);
    expect(dot(whole!, whole!)).toBeCloseTo(1, 4);
    expect(dot(whole!, head!)).toBeGreaterThan(0.3);
  });

  it("has the model's shape and names its space after the model", () => {
    expect(encoder.dimensions).toBe(384);
    expect(encoder.space).toBe(SENTENCE_MODEL.space);
    expect(encoder.name).toBe("all-MiniLM-L6-v2");
  });
});

describe("the answer judge", () => {
  let judge: SentenceEncoder;
  let encoder: SentenceEncoder;
  beforeAll(async () => {
    [judge, encoder] = await Promise.all([
      SentenceEncoder.load({ model: JUDGE_MODEL }),
      SentenceEncoder.load(),
    ]);
  });
  afterAll(() => Promise.all([judge.close(), encoder.close()]));

  it("is its own model and space, pooled by its first piece", () => {
    expect(judge.name).toBe("bge-small-en-v1.5");
    expect(judge.space).toBe(JUDGE_MODEL.space);
    expect(judge.space).not.toBe(SENTENCE_MODEL.space);
    expect(judge.dimensions).toBe(384);
  });

  it("reads a question with its search instruction, and nothing else with it", async () => {
    const question = "When will my refund be paid?";
    const [asQuestion] = await judge.embed([question], undefined, "questions");
    const [asPassage] = await judge.embed([question]);
    const [prefixed] = await judge.embed([JUDGE_MODEL.questionPrefix + question]);
    expect(dot(asQuestion!, prefixed!)).toBeCloseTo(1, 5);
    expect(dot(asQuestion!, asPassage!)).toBeLessThan(0.99);
    // all-MiniLM-L6-v2 has no instruction: a question is read as any text.
    const [minilmQuestion] = await encoder.embed([question], undefined, "questions");
    const [minilmPassage] = await encoder.embed([question]);
    expect(dot(minilmQuestion!, minilmPassage!)).toBeCloseTo(1, 5);
  });

  it("gives a question with nothing to go on a zero vector, not the instruction's", async () => {
    const [empty] = await judge.embed(["   "], undefined, "questions");
    expect(empty!.every((v) => v === 0)).toBe(true);
  });

  it("puts the passage that answers a question above one that only shares its topic", async () => {
    const [question] = await judge.embed(["When will my refund be paid to my card?"], undefined, "questions");
    const [answer, topic] = await judge.embed([
      "The refund will be paid to your card within five business days after the returned item reaches our warehouse.",
      "Refunds and card payments are handled by our customer service team.",
    ]);
    expect(dot(question!, answer!)).toBeGreaterThan(dot(question!, topic!));
  });
});

describe("a missing or altered model", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "locus-models-"));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it("is a ModelUnavailableError naming the file, not a crash", async () => {
    await expect(SentenceEncoder.load({ modelsDir: dir })).rejects.toThrow(ModelUnavailableError);
    await expect(SentenceEncoder.load({ modelsDir: dir })).rejects.toThrow(
      /all-minilm-l6-v2-q\.onnx is not in/,
    );
  });

  it("names the judge's file when the judge is missing", async () => {
    await expect(SentenceEncoder.load({ modelsDir: dir, model: JUDGE_MODEL })).rejects.toThrow(
      /bge-small-en-v1\.5-q\.onnx is not in/,
    );
  });

  it("a file that is not the pinned one (a hash that differs) is refused", async () => {
    const { model, tokenizer } = SENTENCE_MODEL.files;
    await copyFile(join(DEFAULT_MODELS_DIR, tokenizer.name), join(dir, tokenizer.name));
    await writeFile(join(dir, model.name), "not a model");
    await expect(SentenceEncoder.load({ modelsDir: dir })).rejects.toThrow(/not the pinned file/);
  });
});
