/**
 * The approximate vector index against the exact scan, in-process, on the ai benchmark's dataset
 * (real text, vectors from the engine under test): how long the user's graph takes to build in the
 * background and how long the event loop waited meanwhile, how much of the exact answer it finds
 * (recall@10 and @50 for the paraphrase questions, dev and test apart: the settings in
 * APPROXIMATE_INDEX_SETTINGS were chosen on dev), and what a vector search costs either way.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { PARAPHRASES, PARAPHRASES_DEV, SqliteSearchIndex, type Embedder } from "../harness/deps.ts";
import { round, roundSummary, summarise, type Summary } from "../harness/stats.ts";

export interface VectorIndexResult {
  vectors: number;
  /** From the first search of the user (which starts the build) to the graph holding every vector. */
  buildSeconds: number;
  /** The longest the event loop waited for a turn during the build (what a search would have waited). */
  maxEventLoopDelayMs: number;
  /** The process's resident memory before the user's vectors were read, with the matrix, and with the graph too. */
  rssMb: { before: number; withMatrix: number; withGraph: number };
  recall: Record<"dev" | "test", { questions: number; at10: number; at50: number }>;
  /** One vector search of 50 (what ai mode asks), by each method, after warming up. */
  searchMs: { exact: Summary; approximate: Summary };
}

const rssMb = () => Math.round(process.memoryUsage().rss / 1_048_576);

export async function measureVectorIndex(
  indexPath: string,
  userId: string,
  vectors: number,
  embedder: Embedder,
  log: (line: string) => void,
): Promise<VectorIndexResult> {
  const questionsOf = { dev: PARAPHRASES_DEV, test: PARAPHRASES };
  const vectorsOf = {
    dev: await embedder.embed(PARAPHRASES_DEV.map((p) => p.question)),
    test: await embedder.embed(PARAPHRASES.map((p) => p.question)),
  };
  let methods: string[] = [];
  // As the server keeps them: LOCUS_VECTOR_CACHE_MB and LOCUS_VECTOR_INDEX_MIN at their defaults.
  const graphIndex = new SqliteSearchIndex(indexPath, {
    vectorCacheObserver: { vectorCacheLookedUp: () => undefined, vectorSearched: (m) => methods.push(m) },
  });
  const exactIndex = new SqliteSearchIndex(indexPath, { approximateIndexMinVectors: 0 });
  try {
    const search = (index: SqliteSearchIndex, vector: Float32Array, limit: number) =>
      index.vectorSearch({ userId, slot: "local", space: embedder.space, vector, limit });
    const before = rssMb();
    const delay = monitorEventLoopDelay({ resolution: 10 });
    const started = performance.now();
    // The first search reads the matrix and starts the build.
    await search(graphIndex, vectorsOf.dev[0] ?? new Float32Array(0), 50);
    const withMatrix = rssMb();
    delay.enable();
    await graphIndex.approximateIndexesSettled();
    delay.disable();
    const buildSeconds = (performance.now() - started) / 1000;
    const withGraph = rssMb();
    log(`ai: the approximate index of ${vectors} vectors built in ${buildSeconds.toFixed(1)} s`);

    const recall = { dev: { questions: 0, at10: 0, at50: 0 }, test: { questions: 0, at10: 0, at50: 0 } };
    await search(exactIndex, vectorsOf.dev[0] ?? new Float32Array(0), 50);
    const exactMs: number[] = [];
    const approximateMs: number[] = [];
    methods = [];
    for (const set of ["dev", "test"] as const) {
      const found = { at10: 0, at50: 0, of10: 0, of50: 0 };
      for (const vector of vectorsOf[set]) {
        let t = performance.now();
        const exact = await search(exactIndex, vector, 50);
        exactMs.push(performance.now() - t);
        t = performance.now();
        const approximate = await search(graphIndex, vector, 50);
        approximateMs.push(performance.now() - t);
        for (const k of [10, 50] as const) {
          const truth = new Set(exact.slice(0, k).map((h) => h.id));
          found[`at${k}`] += approximate.slice(0, k).filter((h) => truth.has(h.id)).length;
          found[`of${k}`] += truth.size;
        }
      }
      recall[set] = {
        questions: questionsOf[set].length,
        at10: Math.round((found.at10 / Math.max(1, found.of10)) * 1000) / 1000,
        at50: Math.round((found.at50 / Math.max(1, found.of50)) * 1000) / 1000,
      };
    }
    if (methods.some((m) => m !== "approximate"))
      throw new Error(`searches not answered by the graph: ${methods.join(",")}`);
    return {
      vectors,
      buildSeconds: round(buildSeconds),
      maxEventLoopDelayMs: round(delay.max / 1e6),
      rssMb: { before, withMatrix, withGraph },
      recall,
      searchMs: {
        exact: roundSummary(summarise(exactMs)),
        approximate: roundSummary(summarise(approximateMs)),
      },
    };
  } finally {
    await graphIndex.close();
    await exactIndex.close();
  }
}
