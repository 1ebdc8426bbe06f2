import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai";
/**
 * Text to vectors for semantic search: passages when they are indexed, questions when they are
 * asked. Vectors are unit length, so a dot product is their cosine similarity. Two vectors can be
 * compared only when the same engine and model made them: `space` names that, and the index keeps
 * it with every vector it stores.
 */
export interface Embedder {
  /** The vector space: "local" (the offline word vectors) or "openai:<model>". */
  readonly space: string;
  /** What made the vectors, for responses and logs: "local" or the model's name. */
  readonly name: string;
  /** Known once the engine has answered; undefined before for a remote model. */
  readonly dimensions: number | undefined;
  /**
   * How ai search reads this engine's similarities (each engine's cosines live on its own scale):
   * set on development questions for each engine, see VectorMatching.
   */
  readonly matching: VectorMatching;
  /**
   * One vector for each text, in order. A text with nothing to go on gets a zero vector. `kind`
   * says whether the texts are questions or what questions are matched against (passages, the
   * summary's sentences): a model trained for search may read the two differently (bge puts an
   * instruction before questions); the others ignore it.
   */
  embed(texts: readonly string[], signal?: AbortSignal, kind?: TextKind): Promise<Float32Array[]>;
}

/** What texts given to an Embedder are: see Embedder.embed. Passages unless said. */
export type TextKind = "passages" | "questions";

/**
 * `floor`: a passage found only by its vector, less similar than this to the question, is not a
 * match (every passage has some nearest neighbour; without a floor an unrelated question would
 * still fill the results). `weight`: what the vector ranking counts against the keyword ranking
 * when ai search fuses them, and `rankConstant` how much a rank lower in a list costs there (the K
 * of reciprocal-rank fusion: the smaller, the more the first places count; see
 * services/search/src/hybrid-ranking.ts).
 */
export interface VectorMatching {
  floor: number;
  weight: number;
  rankConstant: number;
}

/**
 * The engine did not answer in time, refused, or failed: what a fallback reports. `message` is for
 * the log and may quote the server; `reason` is Locus's own sentence, the only part a client sees.
 */
export class EmbedderError extends Error {
  readonly reason: string;

  constructor(message: string, options?: { cause?: unknown; reason?: string }) {
    super(message, options);
    this.name = "EmbedderError";
    this.reason = options?.reason ?? message;
  }
}

/** Scales a vector to unit length in place (a zero vector stays zero). */
export function normalise(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const v of vector) sum += v * v;
  if (sum > 0) {
    const inverse = 1 / Math.sqrt(sum);
    for (let i = 0; i < vector.length; i++) vector[i] = (vector[i] ?? 0) * inverse;
  }
  return vector;
}

export function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) sum += (a[i] ?? 0) * (b[i] ?? 0);
  return sum;
}

/** True when the vector is all zeros (a text with no known word). */
export const isZero = (vector: Float32Array): boolean => vector.every((v) => v === 0);

/**
 * Why a call to a remote AI server failed, in Locus's words only: whatever the server or the
 * network said (which may name hosts, accounts or keys) stays in the log.
 */
export function remoteFailure(err: unknown, server: string): string {
  // The SDK's own timeout, a caller's time limit (AbortSignal.timeout), or a caller giving up.
  const timedOut =
    err instanceof APIConnectionTimeoutError ||
    err instanceof APIUserAbortError ||
    (err instanceof Error && /Timeout|Abort/i.test(err.name));
  if (timedOut) return `The ${server} did not answer in time.`;
  if (err instanceof APIError && typeof err.status === "number") {
    const status = err.status;
    if (status === 401 || status === 403)
      return `The ${server} refused Locus's credentials (HTTP ${status}).`;
    if (status === 429) return `The ${server} is limiting Locus's requests (HTTP 429).`;
    return `The ${server} failed (HTTP ${status}).`;
  }
  if (err instanceof APIConnectionError) return `The ${server} could not be reached.`;
  return `The ${server} failed.`;
}
