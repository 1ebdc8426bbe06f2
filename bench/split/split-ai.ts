/**
 * ai mode in the split shape: the same real-text passages with their local vectors, the same
 * questions and the same sequence as the all-in-one ai benchmark (ai/ai-search.ts), written into the
 * split stack's PostgreSQL (index and metadata) and asked through its gateway. Every ai search
 * runs BM25 in PostgreSQL and an exact scan of the user's vectors, which the search process keeps
 * in memory between searches (read from PostgreSQL once, after the warm-up's first search).
 */
import { assertRunning, track } from "../harness/cleanup.ts";
import { DEFAULT_AI_OPTIONS, HANDBOOK, timed, writeAiDataset } from "../ai/ai-search.ts";
import {
  createPostgresMetadataStore,
  createUserWithKey,
  type Embedder,
  PARAPHRASES,
  PARAPHRASES_DEV,
  PostgresSearchIndex,
} from "../harness/deps.ts";
import { benchEmbedder, since, sleep, withSplitStack } from "../harness/harness.ts";
import { realTextPassages, realTextQueries } from "../corpus/real-text.ts";
import { round, roundSummary, summarise, type Summary } from "../harness/stats.ts";

export interface SplitAiResult {
  passages: number;
  loadSeconds: number;
  measuredQueries: number;
  /** Client-side, through the gateway. */
  latencyMs: Summary;
  /** Test-set questions whose statement is among the first five, of `testQuestions`. */
  hitAt5Test: number;
  testQuestions: number;
  /** Results from another user's files (must be 0). */
  tenancyLeaks: number;
}

export async function benchSplitAi(
  sizes: readonly number[],
  log: (line: string) => void,
): Promise<SplitAiResult[]> {
  const embedder = await benchEmbedder();
  // The same keyword queries as the all-in-one ai benchmark: drawn from the smallest dataset.
  const keywordQueries = realTextQueries(
    realTextPassages(Math.min(...DEFAULT_AI_OPTIONS.sizes)),
    DEFAULT_AI_OPTIONS.queries,
    7,
  ).map((q) => q.q);
  const results: SplitAiResult[] = [];
  for (const size of sizes) {
    log(`split ai ${size}: starting a split stack ...`);
    results.push(
      await withSplitStack({ extractors: 1, env: { LOCUS_RATE_LIMIT_ENTERPRISE: "100000" } }, (stack) =>
        measureSize(stack, size, embedder, keywordQueries, log),
      ),
    );
  }
  return results;
}

async function measureSize(
  stack: Parameters<Parameters<typeof withSplitStack>[1]>[0],
  size: number,
  embedder: Embedder,
  keywordQueries: readonly string[],
  log: (line: string) => void,
): Promise<SplitAiResult> {
  const databaseUrl = stack.cliEnv.DATABASE_URL;
  if (!databaseUrl) throw new Error("the split stack gave no DATABASE_URL");
  const { email, key } = await track(
    createUserWithKey(stack.dataDir, { plan: "enterprise", env: stack.cliEnv }),
  );
  log(
    `split ai ${size}: writing ${size} real-text passages with their vectors (+25% of another user) into PostgreSQL ...`,
  );
  const started = performance.now();
  const store = createPostgresMetadataStore({ connectionString: databaseUrl, schema: stack.schema });
  const index = new PostgresSearchIndex({ connectionString: databaseUrl, schema: stack.schema });
  let userFileIds: Set<string>;
  let handbookId: string;
  try {
    ({ userFileIds, handbookId } = await writeAiDataset(store, index, embedder, email, size));
  } finally {
    await index.close();
    await store.close();
  }
  const loadSeconds = since(started) / 1000;
  log(`split ai ${size}: loaded in ${loadSeconds.toFixed(1)} s`);

  const options = DEFAULT_AI_OPTIONS;
  const questions = PARAPHRASES.flatMap((p, i) => [p.question, PARAPHRASES_DEV[i]?.question ?? p.question]);
  for (let i = 0; i < options.warmup; i++) {
    await timed(
      stack.baseUrl,
      key,
      keywordQueries[i % keywordQueries.length] ?? "report",
      "ai",
      options.limit,
    );
  }
  const samples: number[] = [];
  let tenancyLeaks = 0;
  for (let i = 0; i < options.queries; i++) {
    assertRunning();
    const q = i % 2 === 0 ? (questions[(i / 2) % questions.length] ?? "") : (keywordQueries[i] ?? "report");
    const s = await timed(stack.baseUrl, key, q, "ai", options.limit);
    tenancyLeaks += s.body.results.filter((r) => !userFileIds.has(r.file_id)).length;
    samples.push(s.ms);
  }
  await sleep(100);
  let hitAt5Test = 0;
  for (const p of HANDBOOK.filter((h) => h.set === "test")) {
    const { body } = await timed(stack.baseUrl, key, p.question, "ai", 5);
    if (body.results.slice(0, 5).some((r) => r.file_id === handbookId && r.locator.page === p.page))
      hitAt5Test++;
  }
  const result: SplitAiResult = {
    passages: size,
    loadSeconds: round(loadSeconds),
    measuredQueries: samples.length,
    latencyMs: roundSummary(summarise(samples)),
    hitAt5Test,
    testQuestions: PARAPHRASES.length,
    tenancyLeaks,
  };
  log(
    `split ai ${size}: p50 ${result.latencyMs.p50} ms, p95 ${result.latencyMs.p95} ms; hit@5 test ${hitAt5Test}/${PARAPHRASES.length}`,
  );
  return result;
}
