/**
 * An approximate nearest-neighbour index (HNSW, from `usearch`) over one user's vectors of one
 * space, so that a search of a large user visits a few thousand vectors instead of scanning them
 * all. It only ever speeds a search up; it never decides what a search finds:
 *
 * - The user's VectorMatrix stays the truth. The graph proposes candidates (quantised to int8, a
 *   quarter of the memory of float32), and each is scored again exactly against the matrix, so a
 *   score is the same whichever way a passage was found (the fusion's floors rely on it).
 * - The graph follows the matrix in the background, in slices that keep the event loop free: a
 *   search uses it only when it holds exactly the rows of the matrix being searched; until then
 *   (first load, or passages changed since) the search scans the matrix as before.
 * - Following a new matrix is incremental: rows gone are removed, new rows added. A row is known by
 *   its passage id and a fingerprint of its vector, since SQLite may give a deleted passage's id to
 *   a new one.
 *
 * Recall against the exact scan is measured in `pnpm bench` (ai section) on real encoder vectors.
 * usearch is native code (N-API) shipped inside its npm package for linux-x64 and linux-arm64;
 * its calls are synchronous, so they run on one thread in bounded slices.
 */
import usearch, { type Index as UsearchIndex } from "usearch";
import type { VectorMatrix } from "./vector-matrix.ts";

/**
 * How the graph is built and searched, set on the paraphrase benchmark's dev questions over 100,000
 * real-text passages with the encoder's vectors (docs/research/approximate-vector-index.md): a
 * search of 128 candidates, 2 per result, found 96.7% of the exact top 50; 256 and 3 per result
 * (at least 150) find 98.7% at no time a search of 50 can tell.
 */
export const APPROXIMATE_INDEX_SETTINGS = {
  /** Links per node (HNSW's M). */
  connectivity: 16,
  /** Candidates weighed while linking a new node (efConstruction). */
  expansionAdd: 128,
  /** Candidates weighed by a search (ef); at least the number of candidates asked for. */
  expansionSearch: 256,
  /** Candidates taken from the graph for each result asked for, before exact re-scoring. */
  candidatesPerResult: 3,
  /** ...and at least this many. */
  minCandidates: 150,
  /** Longest stretch of graph work before the event loop gets a turn, in milliseconds. */
  sliceMs: 8,
} as const;

/** Bytes the graph takes per vector beyond its int8 values (links on the base layer, upper layers, key). */
const GRAPH_BYTES_PER_VECTOR = 2 * APPROXIMATE_INDEX_SETTINGS.connectivity * 4 + 64;

/** Memory an index of `vectors` vectors of `dimensions` takes, about (usearch allocates it natively). */
export const approximateIndexBytes = (vectors: number, dimensions: number): number =>
  vectors * (dimensions + GRAPH_BYTES_PER_VECTOR);

/** Enough removed nodes that rebuilding the graph costs less than keeping them: start afresh. */
const REBUILD_WHEN_REMOVED_OVER_HELD = 1;

/** A vector's fingerprint: two of its values, which tell a new vector under an old id apart. */
const fingerprintOf = (matrix: VectorMatrix, row: number): [number, number] => [
  matrix.valueAt(row, 0),
  matrix.valueAt(row, matrix.dimensions - 1),
];

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class ApproximateVectorIndex {
  private graph: UsearchIndex;
  private readonly keyOfId = new Map<string, number>();
  /** Per key: its passage id (undefined once removed) and its vector's fingerprint. */
  private idOfKey: (string | undefined)[] = [];
  private fingerprints: number[] = [];
  private removedSinceBuilt = 0;
  /** The matrix whose rows the graph holds exactly, and each key's row in it (-1: none). */
  private covered: { matrix: VectorMatrix; rowOfKey: Int32Array } | undefined;
  /** The newest matrix to follow. */
  private target: VectorMatrix | undefined;
  private following: Promise<void> = Promise.resolve();
  private running = false;
  private closed = false;

  constructor(
    readonly dimensions: number,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {
    this.graph = this.newGraph();
  }

  /** Whether searches of `matrix` are answered by the graph now. */
  covers(matrix: VectorMatrix): boolean {
    return this.covered?.matrix === matrix;
  }

  /**
   * Bring the graph to `matrix`'s rows, in the background; resolves when it holds them (or a newer
   * matrix took its place, or following failed, which leaves searches exact).
   */
  follow(matrix: VectorMatrix): Promise<void> {
    if (matrix.dimensions !== this.dimensions || this.closed) return Promise.resolve();
    this.target = matrix;
    // `running` is cleared by followTarget itself as it ends, synchronously: a matrix that comes
    // after its last look at the target starts a new run rather than joining one that has ended.
    if (!this.running) {
      this.running = true;
      this.following = this.followTarget();
    }
    return this.following;
  }

  /**
   * The `k` rows of `matrix` nearest to `query` by the graph, re-scored exactly, best first (ties:
   * the earlier row first); undefined when the graph does not hold exactly this matrix's rows.
   */
  nearest(matrix: VectorMatrix, query: Float32Array, k: number): { id: string; score: number }[] | undefined {
    const covered = this.covered;
    if (covered?.matrix !== matrix || query.length !== this.dimensions) return undefined;
    if (k <= 0) return [];
    const wanted = Math.max(
      k * APPROXIMATE_INDEX_SETTINGS.candidatesPerResult,
      APPROXIMATE_INDEX_SETTINGS.minCandidates,
    );
    const found = this.graph.search(query, Math.min(wanted, this.graph.size()), 1);
    const candidates: { row: number; score: number }[] = [];
    for (const key of found.keys) {
      const row = covered.rowOfKey[Number(key)] ?? -1;
      if (row >= 0) candidates.push({ row, score: matrix.dot(row, query) });
    }
    candidates.sort((a, b) => b.score - a.score || a.row - b.row);
    return candidates.slice(0, k).map((c) => ({ id: matrix.ids[c.row] ?? "", score: c.score }));
  }

  /** Stop following; searches of this index answer undefined from now on. */
  close(): void {
    this.closed = true;
    this.target = undefined;
    this.covered = undefined;
  }

  private newGraph(): UsearchIndex {
    return new usearch.Index({
      dimensions: this.dimensions,
      metric: usearch.MetricKind.Cos,
      quantization: usearch.ScalarKind.I8,
      connectivity: APPROXIMATE_INDEX_SETTINGS.connectivity,
      expansion_add: APPROXIMATE_INDEX_SETTINGS.expansionAdd,
      expansion_search: APPROXIMATE_INDEX_SETTINGS.expansionSearch,
      multi: false,
    });
  }

  private async followTarget(): Promise<void> {
    try {
      for (
        let matrix = this.target;
        matrix && !this.closed && this.covered?.matrix !== matrix;
        matrix = this.target
      ) {
        if (await this.catchUp(matrix)) this.covered = { matrix, rowOfKey: this.rowsOfKeys(matrix) };
      }
    } catch (err) {
      // The graph may be half-changed: drop it, so searches stay exact until a new matrix comes.
      this.reset();
      this.target = undefined;
      this.onError(err);
    } finally {
      this.running = false;
    }
  }

  /** Remove what `matrix` no longer holds and add what it holds new; false if a newer matrix came. */
  private async catchUp(matrix: VectorMatrix): Promise<boolean> {
    this.covered = undefined;
    const rowOfId = matrix.rowIndex();
    const gone: number[] = [];
    for (const [id, key] of this.keyOfId) {
      const row = rowOfId.get(id);
      if (row === undefined || !this.sameFingerprint(key, matrix, row)) gone.push(key);
    }
    if (
      this.removedSinceBuilt + gone.length >
      REBUILD_WHEN_REMOVED_OVER_HELD * (this.keyOfId.size - gone.length)
    ) {
      this.reset();
    } else if (gone.length > 0) {
      this.graph.remove(BigUint64Array.from(gone, BigInt));
      for (const key of gone) {
        this.keyOfId.delete(this.idOfKey[key] ?? "");
        this.idOfKey[key] = undefined;
      }
      this.removedSinceBuilt += gone.length;
    }
    const d = this.dimensions;
    const batchRows = 16;
    const batch = new Float32Array(batchRows * d);
    let sliceStart = performance.now();
    let row = 0;
    while (row < matrix.ids.length) {
      if (this.target !== matrix || this.closed) return false;
      const keys: number[] = [];
      for (; row < matrix.ids.length && keys.length < batchRows; row++) {
        const id = matrix.ids[row] ?? "";
        if (this.keyOfId.has(id)) continue;
        const key = this.idOfKey.length;
        this.idOfKey.push(id);
        this.fingerprints.push(...fingerprintOf(matrix, row));
        this.keyOfId.set(id, key);
        batch.set(matrix.row(row), keys.length * d);
        keys.push(key);
      }
      if (keys.length > 0)
        this.graph.add(BigUint64Array.from(keys, BigInt), batch.subarray(0, keys.length * d), 1);
      if (performance.now() - sliceStart >= APPROXIMATE_INDEX_SETTINGS.sliceMs) {
        await nextTurn();
        sliceStart = performance.now();
      }
    }
    return this.target === matrix && !this.closed;
  }

  private sameFingerprint(key: number, matrix: VectorMatrix, row: number): boolean {
    const [first, last] = fingerprintOf(matrix, row);
    return this.fingerprints[2 * key] === first && this.fingerprints[2 * key + 1] === last;
  }

  private rowsOfKeys(matrix: VectorMatrix): Int32Array {
    const rowOfKey = new Int32Array(this.idOfKey.length).fill(-1);
    const rowOfId = matrix.rowIndex();
    for (const [id, key] of this.keyOfId) rowOfKey[key] = rowOfId.get(id) ?? -1;
    return rowOfKey;
  }

  private reset(): void {
    this.graph = this.newGraph();
    this.keyOfId.clear();
    this.idOfKey = [];
    this.fingerprints = [];
    this.removedSinceBuilt = 0;
    this.covered = undefined;
  }
}
