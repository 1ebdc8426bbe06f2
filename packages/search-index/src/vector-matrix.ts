/**
 * Nearest-neighbour search in memory, for the backends that keep vectors as plain column values
 * (SQLite, Postgres): one user's vectors of one space as a single Float32Array, scanned with a dot
 * product each (exact; 100,000 vectors of 384 dimensions take 110-170 ms), and for a large user an
 * approximate index beside it (see ApproximateVectorIndex). Neither needs a database extension.
 *
 * Vectors are stored as raw little-endian float32 bytes (the byte order of every machine Locus
 * runs on: x86-64 and arm64).
 */

import { ApproximateVectorIndex, approximateIndexBytes } from "./approximate-vector-index.ts";

export const vectorBytes = (vector: Float32Array): Buffer =>
  Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);

export class VectorMatrix {
  private constructor(
    readonly ids: readonly string[],
    readonly dimensions: number,
    private readonly values: Float32Array,
    /** The files the rows belong to (each once), and each row's file as an index into them. */
    private readonly files: readonly string[],
    private readonly fileOfRow: Uint32Array,
  ) {}

  /**
   * Rows of (id, vector bytes, and the passage's file where a search may filter by file); rows
   * whose length is not `dimensions` are skipped.
   */
  static fromRows(
    rows: readonly { id: string; bytes: Uint8Array; fileId?: string }[],
    dimensions: number,
  ): VectorMatrix {
    const ids: string[] = [];
    const values = new Float32Array(rows.length * dimensions);
    const fileOfRow = new Uint32Array(rows.length);
    const fileIndex = new Map<string, number>();
    const byteLength = dimensions * 4;
    for (const row of rows) {
      if (row.bytes.byteLength !== byteLength) continue;
      // A copy of the bytes into the matrix: the row's buffer may not be 4-byte aligned.
      new Uint8Array(values.buffer, ids.length * byteLength, byteLength).set(row.bytes);
      const fileId = row.fileId ?? "";
      let file = fileIndex.get(fileId);
      if (file === undefined) fileIndex.set(fileId, (file = fileIndex.size));
      fileOfRow[ids.length] = file;
      ids.push(row.id);
    }
    return new VectorMatrix(
      ids,
      dimensions,
      values.subarray(0, ids.length * dimensions),
      [...fileIndex.keys()],
      fileOfRow.subarray(0, ids.length),
    );
  }

  get bytes(): number {
    return this.values.byteLength + this.ids.length * 52 + this.files.length * 64;
  }

  /** A row's vector (a view, not a copy). */
  row(row: number): Float32Array {
    return this.values.subarray(row * this.dimensions, (row + 1) * this.dimensions);
  }

  valueAt(row: number, dimension: number): number {
    return this.values[row * this.dimensions + dimension] ?? 0;
  }

  /** A row's similarity to the query (its dot product: vectors are of unit length). */
  dot(row: number, query: Float32Array): number {
    const values = this.values;
    let score = 0;
    for (let i = 0, base = row * this.dimensions; i < this.dimensions; i++)
      score += values[base + i]! * query[i]!;
    return score;
  }

  /** Each id's row, made on first use (an approximate index maps its keys through it). */
  rowIndex(): ReadonlyMap<string, number> {
    return (this.rows ??= new Map(this.ids.map((id, row) => [id, row])));
  }

  private rows: Map<string, number> | undefined;

  /**
   * The `k` rows most similar to the query, best first (ties: the earlier row first). With
   * `onlyFiles`, only rows of those files are candidates: the filter is part of the scan, so `k`
   * rows come back whenever that many pass it.
   */
  nearest(query: Float32Array, k: number, onlyFiles?: ReadonlySet<string>): { id: string; score: number }[] {
    const d = this.dimensions;
    if (query.length !== d || k <= 0) return [];
    const allowed = onlyFiles ? Uint8Array.from(this.files, (f) => (onlyFiles.has(f) ? 1 : 0)) : undefined;
    const fileOfRow = this.fileOfRow;
    const best: { row: number; score: number }[] = [];
    let threshold = -Infinity;
    const values = this.values;
    for (let row = 0, base = 0; row < this.ids.length; row++, base += d) {
      if (allowed !== undefined && allowed[fileOfRow[row]!] === 0) continue;
      let score = 0;
      // Indexes are in range by construction; `?? 0` here would cost a third of the scan.
      for (let i = 0; i < d; i++) score += values[base + i]! * query[i]!;
      if (best.length === k && score <= threshold) continue;
      // Insertion into a short sorted list: k is at most a few hundred.
      let at = best.length;
      while (at > 0 && (best[at - 1]?.score ?? 0) < score) at--;
      best.splice(at, 0, { row, score });
      if (best.length > k) best.pop();
      if (best.length === k) threshold = best[k - 1]?.score ?? -Infinity;
    }
    return best.map((b) => ({ id: this.ids[b.row] ?? "", score: b.score }));
  }
}

/** What the vector cache tells whoever counts (metrics). */
export interface VectorCacheObserver {
  /**
   * A search looked up a user's matrix: `hit` when it was kept (or being loaded by another search),
   * `miss` when it had to be read.
   */
  vectorCacheLookedUp(result: "hit" | "miss"): void;
  /** A search was answered by the user's approximate index, or by scanning every vector. */
  vectorSearched?(method: "approximate" | "exact"): void;
}

export interface VectorCacheOptions {
  maxBytes: number;
  /**
   * A matrix of at least this many vectors gets an approximate index, built in the background and
   * used once it holds the matrix's rows (see ApproximateVectorIndex); 0: every search scans.
   */
  approximateMinVectors?: number;
  observer?: VectorCacheObserver | undefined;
  /** Building an approximate index failed (its searches stay exact). */
  onApproximateIndexError?: (err: unknown) => void;
}

/** How a backend that keeps vectors as column values searches them (SQLite, Postgres). */
export interface VectorSearchOptions {
  /** Memory for users' vectors kept between ai searches, per process (default 256 MB). */
  vectorCacheBytes?: number;
  /** Told whether each ai search found the user's vectors in that memory, and how it searched them (metrics). */
  vectorCacheObserver?: VectorCacheObserver | undefined;
  /** Vectors of one user and space from which an approximate index is kept (default 10,000; 0: never). */
  approximateIndexMinVectors?: number;
  /** Building an approximate index failed (that user's searches stay exact). */
  onApproximateIndexError?: (err: unknown) => void;
}

/** Matches LOCUS_VECTOR_INDEX_MIN's default (packages/runtime/src/config.ts), for callers that set none. */
const DEFAULT_APPROXIMATE_INDEX_MIN_VECTORS = 10_000;

export const vectorCacheOf = (options: VectorSearchOptions): VectorCache =>
  new VectorCache({
    maxBytes: options.vectorCacheBytes ?? 256 * 1024 * 1024,
    approximateMinVectors: options.approximateIndexMinVectors ?? DEFAULT_APPROXIMATE_INDEX_MIN_VECTORS,
    observer: options.vectorCacheObserver,
    ...(options.onApproximateIndexError ? { onApproximateIndexError: options.onApproximateIndexError } : {}),
  });

/** What vectorSearch asks of the cache: the query's vector, how many, and the files allowed (all when unset). */
export interface NearestQuery {
  vector: Float32Array;
  k: number;
  onlyFiles?: ReadonlySet<string> | undefined;
}

/**
 * Users' matrices, kept while their passages do not change: each is tagged with the user's
 * generation (a counter the index bumps in every transaction that changes the user's passages),
 * and a search that sees another generation loads the matrix again. Bounded by bytes (a matrix's
 * approximate index counted with it), least recently used first out; a matrix larger than the
 * whole budget is used once and not kept.
 *
 * A large matrix's approximate index outlives its generation: it follows each new matrix of the
 * user, adding and removing only the rows that changed.
 */
export class VectorCache {
  private readonly entries = new Map<string, { generation: string; matrix: Promise<VectorMatrix> }>();
  private readonly approximate = new Map<string, ApproximateVectorIndex>();
  private readonly following = new Set<Promise<void>>();
  private used = 0;
  private readonly sizes = new Map<string, number>();

  constructor(private readonly options: VectorCacheOptions) {}

  /** The nearest `k` rows of the user's matrix to the query, by the approximate index where it is ready. */
  async nearest(
    key: string,
    generation: string,
    load: () => Promise<VectorMatrix>,
    query: NearestQuery,
  ): Promise<{ id: string; score: number }[]> {
    const matrix = await this.get(key, generation, load);
    const approximate = query.onlyFiles
      ? undefined
      : this.approximate.get(key)?.nearest(matrix, query.vector, query.k);
    this.options.observer?.vectorSearched?.(approximate ? "approximate" : "exact");
    return approximate ?? matrix.nearest(query.vector, query.k, query.onlyFiles);
  }

  /** Resolves when every approximate index has caught up with its newest matrix (for tests and benchmarks). */
  async approximateIndexesSettled(): Promise<void> {
    while (this.following.size > 0) await Promise.all(this.following);
  }

  async get(key: string, generation: string, load: () => Promise<VectorMatrix>): Promise<VectorMatrix> {
    const entry = this.entries.get(key);
    if (entry && entry.generation === generation) {
      this.options.observer?.vectorCacheLookedUp("hit");
      // Most recently used last (Map keeps insertion order).
      this.entries.delete(key);
      this.entries.set(key, entry);
      return entry.matrix;
    }
    this.options.observer?.vectorCacheLookedUp("miss");
    this.forget(key);
    // Concurrent searches of one user share one load.
    const matrix = load();
    this.entries.set(key, { generation, matrix });
    try {
      const loaded = await matrix;
      if (this.entries.get(key)?.matrix === matrix) this.keep(key, loaded);
      return loaded;
    } catch (err) {
      if (this.entries.get(key)?.matrix === matrix) this.forget(key);
      throw err;
    }
  }

  private keep(key: string, matrix: VectorMatrix): void {
    const min = this.options.approximateMinVectors ?? 0;
    const indexed = min > 0 && matrix.ids.length >= min;
    const bytes = matrix.bytes + (indexed ? approximateIndexBytes(matrix.ids.length, matrix.dimensions) : 0);
    if (bytes > this.options.maxBytes) {
      this.evict(key);
      return;
    }
    this.sizes.set(key, bytes);
    this.used += bytes;
    for (const oldest of this.entries.keys()) {
      if (this.used <= this.options.maxBytes) break;
      if (oldest !== key) this.evict(oldest);
    }
    let approximate = this.approximate.get(key);
    if (!indexed || approximate?.dimensions !== matrix.dimensions) {
      approximate?.close();
      this.approximate.delete(key);
      approximate = undefined;
    }
    if (!indexed) return;
    if (!approximate) {
      approximate = new ApproximateVectorIndex(matrix.dimensions, this.options.onApproximateIndexError);
      this.approximate.set(key, approximate);
    }
    const following = approximate.follow(matrix);
    this.following.add(following);
    void following.finally(() => this.following.delete(following));
  }

  /** Stop every build (a closing index: a build would otherwise keep the process alive). */
  close(): void {
    for (const key of [...this.entries.keys(), ...this.approximate.keys()]) this.evict(key);
  }

  /** Drop a generation's matrix (its approximate index stays, to follow the next one). */
  private forget(key: string): void {
    this.entries.delete(key);
    this.used -= this.sizes.get(key) ?? 0;
    this.sizes.delete(key);
  }

  /** Drop a user's matrix and approximate index both. */
  private evict(key: string): void {
    this.forget(key);
    this.approximate.get(key)?.close();
    this.approximate.delete(key);
  }
}
