import { copyFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  DEFAULT_MODELS_DIR,
  dot,
  ModelUnavailableError,
  SENTENCE_MODEL,
  SentenceEncoder,
} from "../src/index.ts";
import { describeEmbedderContract, paraphraseSimilarities } from "./embedder-contract.ts";

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

  it("a file that is not the pinned one (a hash that differs) is refused", async () => {
    const { model, tokenizer } = SENTENCE_MODEL.files;
    await copyFile(join(DEFAULT_MODELS_DIR, tokenizer.name), join(dir, tokenizer.name));
    await writeFile(join(dir, model.name), "not a model");
    await expect(SentenceEncoder.load({ modelsDir: dir })).rejects.toThrow(/not the pinned file/);
  });
});
