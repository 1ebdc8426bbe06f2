import * as tokenizers from "@huggingface/tokenizers";
import type * as Ort from "onnxruntime-node";
import { normalise, type Embedder, type TextKind, type VectorMatching } from "./embedder.ts";
import {
  DEFAULT_MODELS_DIR,
  ModelUnavailableError,
  readSentenceModel,
  SENTENCE_MODEL,
  type SentenceModel,
} from "./sentence-model.ts";

/** The part of @huggingface/tokenizers' Tokenizer that Locus uses. */
interface WordPieceTokenizer {
  encode(text: string): { ids: number[] };
}
/**
 * The package's type declarations import their siblings without file extensions, which Node's
 * module resolution (NodeNext) cannot follow, so its types arrive as `any`: typed here instead.
 */
const { Tokenizer } = tokenizers as unknown as {
  Tokenizer: new (tokenizer: object, config: object) => WordPieceTokenizer;
};

export interface SentenceEncoderOptions {
  /** Where the model's files are (LOCUS_MODELS_DIR). */
  modelsDir?: string;
  /**
   * Threads one run of the model may use. One by default: a process runs several at once
   * (searches, files), and Locus scales by processes, so a run spread over every core only makes
   * the others wait.
   */
  threads?: number;
  /** Which pinned model (default SENTENCE_MODEL, the encoder of passages and questions). */
  model?: SentenceModel;
}

/**
 * Meaning from a real sentence encoder (all-MiniLM-L6-v2 unless another SentenceModel is given),
 * run offline with ONNX Runtime: each text is cut into word pieces, the model gives a vector per
 * piece, and the text's vector is pooled from them as the model's authors do (all-MiniLM: their
 * mean), scaled to unit length. "How long until I get my money back?" and "The refund will be
 * paid within five days" then score about 0.6 though they share no word, and an unrelated
 * sentence about 0.
 *
 * Cost on one core: about 8 ms for a passage of 80 word pieces (~120 a second), 5 ms for a
 * question (all-MiniLM-L6-v2; bge-small-en-v1.5, twice as deep, takes about twice as long).
 */
export class SentenceEncoder implements Embedder {
  readonly name: string;
  readonly space: string;
  readonly dimensions: number;
  readonly matching: VectorMatching;

  private constructor(
    private readonly session: Ort.InferenceSession,
    private readonly tokenizer: WordPieceTokenizer,
    private readonly ort: typeof Ort,
    private readonly model: SentenceModel,
  ) {
    this.name = model.name;
    this.space = model.space;
    this.dimensions = model.dimensions;
    this.matching = model.matching;
  }

  /**
   * The encoder, from the pinned files (checked by hash). ModelUnavailableError when the files are
   * missing or the runtime cannot load on this machine: the caller degrades (ai search to the word
   * vectors, the summary to no judge).
   */
  static async load(options: SentenceEncoderOptions = {}): Promise<SentenceEncoder> {
    const model = options.model ?? SENTENCE_MODEL;
    const files = await readSentenceModel(options.modelsDir ?? DEFAULT_MODELS_DIR, model);
    let ort: typeof Ort;
    try {
      // Loaded here, not at the top: a machine the native runtime does not support still starts.
      ort = await import("onnxruntime-node");
    } catch (err) {
      throw new ModelUnavailableError("ONNX Runtime cannot load on this machine", { cause: err });
    }
    const threads = options.threads ?? 1;
    const session = await ort.InferenceSession.create(files.model, {
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      executionMode: "sequential",
      graphOptimizationLevel: "all",
    });
    const tokenizer = new Tokenizer(JSON.parse(files.tokenizer.toString("utf8")) as object, {});
    return new SentenceEncoder(session, tokenizer, ort, model);
  }

  /** The text's word pieces, framed by [CLS] and [SEP] and cut to the model's length. */
  private pieces(text: string): number[] {
    const { ids } = this.tokenizer.encode(text);
    const { maxTokens } = this.model;
    if (ids.length <= maxTokens) return ids;
    // Keep the closing [SEP]: the model was trained on framed texts.
    return [...ids.slice(0, maxTokens - 1), ids[ids.length - 1] ?? 0];
  }

  /**
   * Each text is run alone. The model's int8 layers scale their activations by what a run holds,
   * padding included, so a text batched with longer ones came out measurably different (cosine
   * 0.992 to itself run alone); alone, a passage always gets the same vector, as its question
   * does, whichever neighbours it was indexed with. Batches of 8 were only 10% faster.
   */
  async embed(
    texts: readonly string[],
    _signal?: AbortSignal,
    kind: TextKind = "passages",
  ): Promise<Float32Array[]> {
    const prefix = kind === "questions" ? (this.model.questionPrefix ?? "") : "";
    const vectors: Float32Array[] = [];
    for (const text of texts) {
      // A question with no words stays empty (a zero vector), not the instruction alone.
      const ids = this.pieces(prefix && /[\p{L}\p{N}]/u.test(text) ? prefix + text : text);
      // [CLS] and [SEP] alone: a text with nothing to go on gets a zero vector.
      vectors.push(ids.length > 2 ? await this.run(ids) : new Float32Array(this.dimensions));
    }
    return vectors;
  }

  /** One run of the model: the text's vector pooled from its pieces' (see SentenceModel.pooling), unit length. */
  private async run(pieces: readonly number[]): Promise<Float32Array> {
    const { Tensor } = this.ort;
    const shape = [1, pieces.length];
    const output = await this.session.run({
      input_ids: new Tensor("int64", BigInt64Array.from(pieces, BigInt), shape),
      attention_mask: new Tensor("int64", new BigInt64Array(pieces.length).fill(1n), shape),
      token_type_ids: new Tensor("int64", new BigInt64Array(pieces.length), shape),
    });
    const hidden = output.last_hidden_state?.data;
    if (!(hidden instanceof Float32Array)) throw new Error("the sentence encoder gave no last_hidden_state");
    const d = this.dimensions;
    // [CLS] is the first of the pieces' rows; copied out of the output tensor.
    if (this.model.pooling === "first") return normalise(hidden.slice(0, d));
    const vector = new Float32Array(d);
    for (let base = 0; base < hidden.length; base += d)
      for (let k = 0; k < d; k++) vector[k] = vector[k]! + hidden[base + k]!;
    return normalise(vector);
  }

  async close(): Promise<void> {
    await this.session.release();
  }
}
