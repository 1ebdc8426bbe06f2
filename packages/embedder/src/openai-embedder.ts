import OpenAI, { APIError } from "openai";
import { words } from "@locus/passages";
import { EmbedderError, normalise, remoteFailure, type Embedder } from "./embedder.ts";

export interface OpenAiEmbedderOptions {
  /** Any OpenAI-compatible server: OpenAI itself, or a local one (Ollama, vLLM, LocalAI, …). */
  baseURL: string;
  apiKey: string;
  /** The embedding model, e.g. text-embedding-3-small or nomic-embed-text. */
  model: string;
  /** Asks for shorter vectors (text-embedding-3 models take it); unset: the model's own size. */
  dimensions?: number;
  /** Longest wait for one request, in ms. */
  timeoutMs: number;
  /** Retries on 429, 5xx and dropped connections (the client backs off between them). */
  maxRetries: number;
  /** Texts per request (default 128). */
  batchSize?: number;
}

/**
 * Passage and question vectors from an OpenAI-compatible `/embeddings` endpoint. Vectors are
 * scaled to unit length here (not every server does). A text with no word in it gets a zero
 * vector without a request: some servers refuse empty input.
 */
export class OpenAiEmbedder implements Embedder {
  readonly name: string;
  readonly space: string;
  /** Unmeasured for remote models (none can be reached from here): the word vectors' setting. */
  readonly matching = { floor: 0.15, weight: 1, rankConstant: 20 };
  private size: number | undefined;
  private readonly client: OpenAI;
  private readonly batchSize: number;

  constructor(private readonly options: OpenAiEmbedderOptions) {
    this.name = options.model;
    this.space = `openai:${options.model}${options.dimensions ? `:${options.dimensions}` : ""}`;
    this.size = options.dimensions;
    this.batchSize = options.batchSize ?? 128;
    this.client = new OpenAI({
      baseURL: options.baseURL,
      apiKey: options.apiKey,
      timeout: options.timeoutMs,
      maxRetries: options.maxRetries,
    });
  }

  get dimensions(): number | undefined {
    return this.size;
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const out: (Float32Array | undefined)[] = texts.map(() => undefined);
    const todo = texts.flatMap((text, i) => (words(text).length > 0 ? [{ text, i }] : []));
    for (let start = 0; start < todo.length; start += this.batchSize) {
      const batch = todo.slice(start, start + this.batchSize);
      const vectors = await this.request(
        batch.map((b) => b.text),
        signal,
      );
      batch.forEach((b, k) => (out[b.i] = vectors[k]));
    }
    const zero = () => new Float32Array(this.size ?? 0);
    return out.map((v) => v ?? zero());
  }

  private async request(input: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    let response: OpenAI.Embeddings.CreateEmbeddingResponse;
    try {
      response = await this.client.embeddings.create(
        {
          model: this.options.model,
          input,
          encoding_format: "float",
          ...(this.options.dimensions ? { dimensions: this.options.dimensions } : {}),
        },
        signal ? { signal } : {},
      );
    } catch (err) {
      const status = err instanceof APIError && err.status !== undefined ? ` (${err.status})` : "";
      throw new EmbedderError(
        `The embedding server failed${status}: ${err instanceof Error ? err.message : String(err)}`,
        { cause: err, reason: remoteFailure(err, "embedding server") },
      );
    }
    const data = [...response.data].sort((a, b) => a.index - b.index);
    if (data.length !== input.length) {
      throw new EmbedderError(
        `The embedding server returned ${data.length} vectors for ${input.length} texts.`,
      );
    }
    return data.map((d) => {
      const vector = Float32Array.from(d.embedding);
      // Every vector in one space has one length: a server that changes it (another model behind
      // the same name) would make comparisons meaningless.
      this.size ??= vector.length;
      if (vector.length !== this.size || vector.length === 0) {
        throw new EmbedderError(
          `The embedding server returned a vector of ${vector.length} numbers; this model's have ${this.size}.`,
        );
      }
      return normalise(vector);
    });
  }
}
