// The Elasticsearch benchmark's passages: real text nobody wrote for Locus (bench/corpus/real-text.ts), and
// each one's vector from the offline sentence encoder, as the indexer writes them.
import { createHash } from "node:crypto";
import { appendFileSync, existsSync, mkdirSync, statSync, truncateSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { CACHE_DIR } from "../harness/paths.ts";
import { assertRunning } from "../harness/cleanup.ts";
import { seconds } from "./elasticsearch-cluster.ts";
import type { Embedder, IndexedPassage } from "../harness/deps.ts";
import { PASSAGES_PER_FILE } from "./elasticsearch-types.ts";
import {
  REAL_TEXT_SOURCES,
  REAL_TEXT_VERSION,
  realTextAvailable,
  realTextPassages,
  type RealPassage,
} from "../corpus/real-text.ts";

/**
 * The corpus has fewer passages (about 368,000) than a sizing run asks for (a million), so tenants
 * share texts, as users who upload the same public documents do: tenant k's passages are the next
 * run of the pool after tenant k-1's, wrapping round to the start. Within a tenant every passage is
 * distinct while the tenant is no larger than the pool, which Zipf sizes keep for a million
 * passages over 10 tenants or more (the largest holds a third).
 */
export interface EsCorpus {
  /** The distinct passages, in the pool's fixed order. */
  pool: readonly RealPassage[];
  /** Where each tenant's run starts in the pool, largest tenant first. */
  offsets: readonly number[];
  /** Each pooled passage's vector (rows of `dims`), or null when the run has none. */
  vectors: { space: string; dims: number; rows: Float32Array } | null;
}

/** The pool index of a tenant's i-th passage. */
export const poolIndex = (corpus: EsCorpus, tenant: number, i: number): number =>
  (corpus.offsets[tenant]! + i) % corpus.pool.length;

/** The pool and every tenant's start in it; the pool is no larger than the passages asked for. */
export function esCorpus(sizes: readonly number[], log: (line: string) => void): Omit<EsCorpus, "vectors"> {
  const total = sizes.reduce((n, s) => n + s, 0);
  const pool = realTextPassages(Math.min(total, realTextAvailable(log)), log);
  if (sizes[0]! > pool.length)
    log(
      `elasticsearch: the largest tenant (${sizes[0]!.toLocaleString("en")} passages) is larger than the real-text pool ` +
        `(${pool.length.toLocaleString("en")}): its passages repeat; use more tenants`,
    );
  const offsets: number[] = [];
  let next = 0;
  for (const size of sizes) {
    offsets.push(next % pool.length);
    next += size;
  }
  return { pool, offsets };
}

/** Rows encoded per call: large enough to keep the encoder's batches full. */
const ENCODE_BATCH = 256;

/**
 * The pool's vectors from `encoder`, read from bench/.cache/es-vectors when an earlier run encoded
 * them. Encoding the whole pool takes long (about an hour on 2 cores), so rows are appended to the
 * cache as they are made: an interrupted run resumes where it stopped, and a larger run goes on
 * from a smaller one's (a smaller pool is the start of a larger one: bench/corpus/real-text.ts). The file
 * is named by the encoder's space and the corpus's version and packages, so another model or
 * corpus never reads it.
 */
export async function poolVectors(
  pool: readonly RealPassage[],
  encoder: Embedder,
  log: (line: string) => void,
): Promise<{ space: string; dims: number; rows: Float32Array; encodedNow: number; encodeSeconds: number }> {
  const dims = encoder.dimensions;
  if (!dims) throw new Error(`${encoder.name} does not say its dimensions`);
  const corpus = JSON.stringify([
    encoder.space,
    REAL_TEXT_VERSION,
    REAL_TEXT_SOURCES.map((s) => `${s.pkg}=${s.version}`),
  ]);
  const dir = join(CACHE_DIR, "es-vectors");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `real-text-${createHash("sha256").update(corpus).digest("hex").slice(0, 16)}.f32`);
  const rowBytes = dims * 4;
  const bytes = existsSync(path) ? statSync(path).size : 0;
  let done = Math.floor(bytes / rowBytes);
  // A row cut short by an interruption. (Two runs encoding at once into one file would spoil it:
  // run one benchmark at a time.)
  if (bytes % rowBytes !== 0) truncateSync(path, done * rowBytes);
  const encodedNow = Math.max(0, pool.length - done);
  const started = performance.now();
  if (encodedNow > 0) {
    log(
      `elasticsearch: encoding ${encodedNow.toLocaleString("en")} passages with ${encoder.name}` +
        (done > 0 ? ` (${done.toLocaleString("en")} cached in ${path})` : ` into ${path}`),
    );
    let lastLog = started;
    while (done < pool.length) {
      assertRunning();
      const batch = pool.slice(done, done + ENCODE_BATCH).map((p) => p.content);
      const vectors = await encoder.embed(batch);
      const rowsMade = new Float32Array(vectors.length * dims);
      vectors.forEach((v, i) => rowsMade.set(v, i * dims));
      appendFileSync(path, Buffer.from(rowsMade.buffer));
      done += batch.length;
      const now = performance.now();
      if (now - lastLog > 30_000) {
        lastLog = now;
        const rate = (done - (pool.length - encodedNow)) / ((now - started) / 1000);
        log(
          `elasticsearch: encoded ${done.toLocaleString("en")}/${pool.length.toLocaleString("en")}, ` +
            `${Math.round(rate)}/s, about ${seconds(((pool.length - done) / rate) * 1000)} to go`,
        );
      }
    }
  }
  const file = await readFile(path);
  // The pool's rows (the file may hold more, from a larger run): a view where the bytes are
  // aligned for floats (a large file's buffer is its own), else a copy.
  const rows =
    file.byteOffset % 4 === 0
      ? new Float32Array(file.buffer, file.byteOffset, pool.length * dims)
      : new Float32Array(new Uint8Array(file.subarray(0, pool.length * rowBytes)).buffer);
  return {
    space: encoder.space,
    dims,
    rows,
    encodedNow,
    encodeSeconds: Math.round((performance.now() - started) / 1000),
  };
}

/** Row `i` of the pool's vectors. */
export const vectorAt = (vectors: NonNullable<EsCorpus["vectors"]>, i: number): Float32Array =>
  vectors.rows.subarray(i * vectors.dims, (i + 1) * vectors.dims);

/**
 * A tenant's file as the indexer hands it to the index: its passages (the extractors' locators,
 * pages numbered from the file's first) with their vectors when the run has them.
 */
export function tenantFile(corpus: EsCorpus, tenant: number, file: number, count: number): IndexedPassage[] {
  const first = file * PASSAGES_PER_FILE;
  const passages: IndexedPassage[] = [];
  let firstPage: number | undefined;
  for (let i = first; i < first + count; i++) {
    const at = poolIndex(corpus, tenant, i);
    const p = corpus.pool[at]!;
    firstPage ??= p.page;
    // A run that wraps round the pool starts its pages again: never a page 0 or below.
    const page = Math.max(1, p.page - firstPage + 1);
    passages.push({
      content: p.content,
      locator: { page, line: p.line, line_end: p.lineEnd, source: "text" },
      ...(corpus.vectors
        ? { vectors: { local: { space: corpus.vectors.space, vector: vectorAt(corpus.vectors, at) } } }
        : {}),
    });
  }
  return passages;
}
