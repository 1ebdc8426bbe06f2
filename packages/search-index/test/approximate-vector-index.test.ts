import { ApproximateVectorIndex } from "../src/approximate-vector-index.ts";
import { SqliteSearchIndex } from "../src/sqlite-search-index.ts";
import { VectorCache, VectorMatrix, vectorBytes } from "../src/vector-matrix.ts";
import { searchIndexContract, viaApproximateIndex } from "./search-index.contract.ts";

/**
 * Unit vectors in clusters, as a sentence encoder's vectors of related passages are (uniform
 * random vectors have no neighbourhoods, the worst case of every graph index, and no user's text
 * looks like them). Seeded, so a failure can be replayed.
 */
const clusteredVectors = (count: number, dimensions: number, seed = 7): Float32Array[] => {
  let state = seed;
  const random = () => ((state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31) * 2 - 1;
  const unit = (v: Float32Array) => {
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  };
  const centres = Array.from({ length: Math.ceil(count / 50) }, () =>
    unit(Float32Array.from({ length: dimensions }, random)),
  );
  return Array.from({ length: count }, (_, i) =>
    unit(Float32Array.from(centres[i % centres.length]!, (c) => c + random() * 0.15)),
  );
};

const matrixOf = (vectors: readonly Float32Array[], ids = vectors.map((_, i) => String(i))) =>
  VectorMatrix.fromRows(
    vectors.map((v, i) => ({ id: ids[i]!, bytes: vectorBytes(v), fileId: `file-${i % 7}` })),
    vectors[0]!.length,
  );

const recallAt = (k: number, found: readonly { id: string }[], exact: readonly { id: string }[]) => {
  const truth = new Set(exact.slice(0, k).map((h) => h.id));
  return found.slice(0, k).filter((h) => truth.has(h.id)).length / truth.size;
};

describe("ApproximateVectorIndex", () => {
  const dimensions = 32;
  const vectors = clusteredVectors(3_000, dimensions);
  const queries = clusteredVectors(40, dimensions, 99);

  it("finds what the exact scan finds (recall@10 ≥ 0.95), with the exact scores, best first", async () => {
    const matrix = matrixOf(vectors);
    const index = new ApproximateVectorIndex(dimensions);
    await index.follow(matrix);
    expect(index.covers(matrix)).toBe(true);
    let recall = 0;
    for (const query of queries) {
      const exact = matrix.nearest(query, 10);
      const found = index.nearest(matrix, query, 10)!;
      expect(found).toHaveLength(10);
      recall += recallAt(10, found, exact);
      // Re-scored against the matrix: a passage found both ways has the same score both ways.
      for (const hit of found) {
        const row = matrix.rowIndex().get(hit.id)!;
        expect(hit.score).toBeCloseTo(matrix.dot(row, query), 6);
      }
      expect(found.map((h) => h.score)).toEqual([...found.map((h) => h.score)].sort((a, b) => b - a));
    }
    expect(recall / queries.length).toBeGreaterThanOrEqual(0.95);
  });

  it("answers nothing (the caller scans) for a matrix it does not hold yet, and never blocks the event loop for the whole build", async () => {
    const matrix = matrixOf(vectors);
    const index = new ApproximateVectorIndex(dimensions);
    expect(index.nearest(matrix, queries[0]!, 5)).toBeUndefined();
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    const following = index.follow(matrix);
    expect(index.nearest(matrix, queries[0]!, 5)).toBeUndefined();
    await following;
    clearInterval(ticker);
    expect(turns).toBeGreaterThan(0);
    expect(index.nearest(matrix, queries[0]!, 5)).toHaveLength(5);
  });

  it("follows a changed matrix: removed rows are never found, added rows are, an old id with a new vector is the new vector", async () => {
    const index = new ApproximateVectorIndex(dimensions);
    const first = matrixOf(vectors.slice(0, 2_000));
    await index.follow(first);
    const target = queries[3]!;
    // The second matrix: rows 0-499 gone, rows 2000-2999 added, and id "1000" now holds the query itself.
    const kept = vectors.slice(500, 2_000);
    const ids = kept.map((_, i) => String(500 + i));
    const changed = matrixOf(
      [...kept.map((v, i) => (ids[i] === "1000" ? target : v)), ...vectors.slice(2_000)],
      [...ids, ...vectors.slice(2_000).map((_, i) => String(2_000 + i))],
    );
    await index.follow(changed);
    expect(index.covers(changed)).toBe(true);
    expect(index.covers(first)).toBe(false);
    expect(index.nearest(first, target, 5)).toBeUndefined();
    for (const query of [...queries, ...vectors.slice(0, 50)]) {
      const found = index.nearest(changed, query, 20)!;
      for (const hit of found) expect(Number(hit.id)).toBeGreaterThanOrEqual(500);
    }
    expect(index.nearest(changed, target, 1)?.[0]).toEqual({
      id: "1000",
      score: expect.closeTo(1, 5) as number,
    });
    const added = vectors[2_500]!;
    expect(index.nearest(changed, added, 1)?.[0]?.id).toBe("2500");
  });

  it("a matrix that comes just as a run ends is followed too (never left to a run that has ended)", async () => {
    const first = matrixOf(vectors.slice(0, 10));
    const second = matrixOf(vectors.slice(0, 12));
    // The second matrix comes after every number of microtasks into the first (small, so quick) run.
    for (let ticks = 0; ticks < 12; ticks++) {
      const index = new ApproximateVectorIndex(dimensions);
      void index.follow(first);
      for (let i = 0; i < ticks; i++) await Promise.resolve();
      await index.follow(second);
      expect([ticks, index.covers(second)]).toEqual([ticks, true]);
    }
  });

  it("closed midway, stops building at the next slice and answers nothing", async () => {
    const index = new ApproximateVectorIndex(dimensions);
    const matrix = matrixOf(vectors);
    const following = index.follow(matrix);
    index.close();
    await following;
    expect(index.covers(matrix)).toBe(false);
    expect(index.nearest(matrix, queries[0]!, 5)).toBeUndefined();
  });

  it("when a newer matrix comes during a build, ends holding the newest", async () => {
    const index = new ApproximateVectorIndex(dimensions);
    const older = matrixOf(vectors);
    const newer = matrixOf(vectors.slice(0, 1_000));
    const first = index.follow(older);
    const second = index.follow(newer);
    await Promise.all([first, second]);
    expect(index.covers(newer)).toBe(true);
    expect(index.covers(older)).toBe(false);
  });
});

describe("VectorCache with approximate indexes", () => {
  const dimensions = 16;
  const vectors = clusteredVectors(600, dimensions, 3);
  const load = (matrix: VectorMatrix) => () => Promise.resolve(matrix);

  const cacheWithLog = (approximateMinVectors: number, maxBytes = 64 * 1024 * 1024) => {
    const methods: string[] = [];
    const cache = new VectorCache({
      maxBytes,
      approximateMinVectors,
      observer: { vectorCacheLookedUp: () => undefined, vectorSearched: (method) => methods.push(method) },
    });
    return { cache, methods };
  };

  it("scans until a large user's index is built, then answers by it; a filter always scans", async () => {
    const { cache, methods } = cacheWithLog(500);
    const matrix = matrixOf(vectors);
    const query = { vector: vectors[10]!, k: 3 };
    const exact = matrix.nearest(query.vector, 3);
    expect(await cache.nearest("user", "1", load(matrix), query)).toEqual(exact);
    await cache.approximateIndexesSettled();
    expect(await cache.nearest("user", "1", load(matrix), query)).toEqual(exact);
    const onlyFiles = new Set(["file-1"]);
    expect(await cache.nearest("user", "1", load(matrix), { ...query, onlyFiles })).toEqual(
      matrix.nearest(query.vector, 3, onlyFiles),
    );
    expect(methods).toEqual(["exact", "approximate", "exact"]);
  });

  it("a user below the threshold, or a setting of 0, is always scanned", async () => {
    for (const min of [601, 0]) {
      const { cache, methods } = cacheWithLog(min);
      const matrix = matrixOf(vectors);
      await cache.nearest("user", "1", load(matrix), { vector: vectors[0]!, k: 1 });
      await cache.approximateIndexesSettled();
      await cache.nearest("user", "1", load(matrix), { vector: vectors[0]!, k: 1 });
      expect(methods).toEqual(["exact", "exact"]);
    }
  });

  it("a new generation with a few rows more is answered by the index at once", async () => {
    const { cache, methods } = cacheWithLog(500);
    await cache.nearest("user", "1", load(matrixOf(vectors)), { vector: vectors[0]!, k: 1 });
    await cache.approximateIndexesSettled();
    const grown = matrixOf([...vectors, ...clusteredVectors(5, dimensions, 11)]);
    const query = { vector: grown.row(602), k: 1 };
    expect((await cache.nearest("user", "2", load(grown), query))[0]?.id).toBe("602");
    expect(methods).toEqual(["exact", "approximate"]);
  });

  it("an index counts in the cache's bytes: a user whose matrix and index exceed the budget is scanned and not kept", async () => {
    const matrix = matrixOf(vectors);
    const { cache, methods } = cacheWithLog(500, matrix.bytes + 1_000);
    await cache.nearest("user", "1", load(matrix), { vector: vectors[0]!, k: 1 });
    await cache.approximateIndexesSettled();
    await cache.nearest("user", "1", load(matrix), { vector: vectors[0]!, k: 1 });
    expect(methods).toEqual(["exact", "exact"]);
  });
});

/** The SearchIndex contract again, every vector search answered by the approximate index (see viaApproximateIndex). */
searchIndexContract("SQLite FTS5, vectors by the approximate index", () => {
  const { options, wrap } = viaApproximateIndex();
  const index = new SqliteSearchIndex(":memory:", options);
  return Promise.resolve({ index: wrap(index), cleanup: () => index.close() });
});
