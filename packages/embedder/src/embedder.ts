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
  /** One vector for each text, in order. A text with nothing to go on gets a zero vector. */
  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]>;
}

/** The engine did not answer in time, refused, or failed: what a fallback reports. */
export class EmbedderError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "EmbedderError";
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
