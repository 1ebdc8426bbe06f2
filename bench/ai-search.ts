import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { assertRunning, track } from "./cleanup.ts";
import { buildVocabulary, type Vocabulary } from "./corpus.ts";
import {
  createSqliteMetadataStore,
  createUserWithKey,
  LocalEmbedder,
  PARAPHRASES,
  SqliteSearchIndex,
  withVectors,
  type SearchIndex,
} from "./deps.ts";
import { serverTimings, since, sleep, withServer, withTempDir } from "./harness.ts";
import {
  asAsync,
  DEFAULT_SEARCH_OPTIONS,
  fileRecord,
  makeQueries,
  writeDataset,
  type ExtractedPassage,
} from "./search-latency.ts";
import { median, round, roundSummary, summarise, type Summary } from "./stats.ts";

/**
 * ai mode with the local engines (offline word vectors, extractive summary), all-in-one: latency
 * over HTTP at 10k and 100k passages, and how often the right passage is in the top five for
 * questions asked in other words (PARAPHRASES), against quick mode on the same questions. Also
 * what loading the word vectors costs a process.
 */
export interface AiBenchOptions {
  sizes: number[];
  /** Measured ai searches per size: the paraphrase questions and generated keyword queries, alternating. */
  queries: number;
  warmup: number;
  limit: number;
  /** Runs of the word-vector load, each in a fresh process. */
  loadRuns: number;
}

export const DEFAULT_AI_OPTIONS: AiBenchOptions = {
  sizes: [10_000, 100_000],
  queries: 120,
  warmup: 20,
  limit: 10,
  loadRuns: 3,
};

export interface AiSizeResult {
  passages: number;
  /** Writing the dataset with its vectors through SqliteSearchIndex, before the server starts. */
  loadSeconds: number;
  loadPassagesPerSecond: number;
  measuredQueries: number;
  latencyMs: Summary;
  serverMs: Summary | null;
  /** Paraphrase questions whose statement is in the top 5. */
  hitAt5: { ai: number; quick: number; questions: number };
  missedByAi: string[];
  tenancyLeaks: number;
}

export interface AiBenchResult {
  wordVectors: { medianLoadMs: number; medianRssMb: number; baselineRssMb: number; words: number };
  sizes: AiSizeResult[];
}

const LOADER = fileURLToPath(new URL("./word-vectors-load.ts", import.meta.url));
const REQUEST_TIMEOUT_MS = 20_000;

/** Loads the word vectors in a fresh process, `runs` times: the cost every embedding process pays once. */
function measureWordVectorLoad(runs: number): AiBenchResult["wordVectors"] {
  const samples = Array.from({ length: runs }, () => {
    const out = execFileSync(process.execPath, ["--import", "tsx", LOADER], { encoding: "utf8" });
    return JSON.parse(out.trim().split("\n").at(-1) ?? "{}") as {
      loadMs: number;
      rssMb: number;
      baselineRssMb: number;
      words: number;
    };
  });
  return {
    medianLoadMs: round(median(samples.map((s) => s.loadMs))),
    medianRssMb: round(median(samples.map((s) => s.rssMb))),
    baselineRssMb: round(median(samples.map((s) => s.baselineRssMb))),
    words: samples[0]?.words ?? 0,
  };
}

interface SearchBody {
  results: { file_id: string; locator: { page?: number } }[];
  count: number;
}

async function timed(
  baseUrl: string,
  key: string,
  q: string,
  mode: "ai" | "quick",
  limit: number,
): Promise<{ ms: number; requestId: string | null; body: SearchBody }> {
  const started = performance.now();
  const res = await fetch(`${baseUrl}/api/search?q=${encodeURIComponent(q)}&mode=${mode}&limit=${limit}`, {
    headers: { Authorization: `Bearer ${key}` },
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await res.text();
  const ms = since(started);
  if (res.status !== 200)
    throw new Error(`search "${q}" (${mode}) answered ${res.status}: ${text.slice(0, 300)}`);
  return { ms, requestId: res.headers.get("x-request-id"), body: JSON.parse(text) as SearchBody };
}

/** The thirty statements, one passage each on pages of their own, in one file of the measured user. */
const statementPassages = (): ExtractedPassage[] =>
  PARAPHRASES.map((p, i) => ({
    content: p.statement,
    locator: { page: i + 1, line: 1, line_end: 1, source: "text" as const },
  }));

async function benchSize(
  size: number,
  options: AiBenchOptions,
  embedder: LocalEmbedder,
  vocab: Vocabulary,
  log: (line: string) => void,
): Promise<AiSizeResult> {
  return withTempDir("locus-bench-ai-", async (dataDir) => {
    log(`ai ${size}: writing ${size} passages with their vectors (+25% of another user) ...`);
    const { email, key } = await createUserWithKey(dataDir, { plan: "enterprise" });
    const started = performance.now();
    const store = createSqliteMetadataStore(join(dataDir, "metadata.sqlite"));
    const index = new SqliteSearchIndex(join(dataDir, "index.sqlite"));
    const handbookId = randomUUID();
    let userFileIds: Set<string>;
    let loaded: number;
    try {
      await store.migrate();
      const user = await store.findUserByEmail(email);
      if (!user) throw new Error(`the CLI did not create ${email}`);
      const other = await store.createUser({
        email: `other-tenant-${randomUUID()}@example.com`,
        plan: "pro",
      });
      // Passages reach the index as the indexer hands them over: with their local vectors.
      const embedding: Pick<SearchIndex, "replaceFilePassages"> = {
        replaceFilePassages: (file, passages) =>
          index.replaceFilePassages(file, withVectors(passages, { local: embedder })),
      };
      const written = await track(
        writeDataset(
          store,
          embedding,
          { userId: user.id, otherUserId: other.id },
          size,
          vocab,
          DEFAULT_SEARCH_OPTIONS,
        ),
      );
      await store.createFile({
        ...fileRecord(handbookId, user.id, 0, PARAPHRASES.length, new Date().toISOString()),
        originalName: "handbook.pdf",
      });
      await embedding.replaceFilePassages(
        { userId: user.id, fileId: handbookId },
        asAsync(statementPassages()),
      );
      userFileIds = new Set([...written.userFileIds, handbookId]);
      loaded = size + written.otherTenantPassages + PARAPHRASES.length;
    } finally {
      await index.close();
      await store.close();
    }
    const loadSeconds = since(started) / 1000;
    log(`ai ${size}: loaded in ${loadSeconds.toFixed(1)} s; starting the server`);

    return withServer(dataDir, { LOCUS_RATE_LIMIT_ENTERPRISE: "100000" }, async (server) => {
      const keywordQueries = makeQueries(vocab, options.queries, 7).map((q) => q.q);
      const questions = PARAPHRASES.map((p) => p.question);
      for (let i = 0; i < options.warmup; i++) {
        await timed(
          server.baseUrl,
          key,
          keywordQueries[i % keywordQueries.length] ?? "report",
          "ai",
          options.limit,
        );
      }
      const samples: { ms: number; requestId: string | null }[] = [];
      let tenancyLeaks = 0;
      for (let i = 0; i < options.queries; i++) {
        assertRunning();
        const q =
          i % 2 === 0 ? (questions[(i / 2) % questions.length] ?? "") : (keywordQueries[i] ?? "report");
        const s = await timed(server.baseUrl, key, q, "ai", options.limit);
        tenancyLeaks += s.body.results.filter((r) => !userFileIds.has(r.file_id)).length;
        samples.push(s);
      }
      await sleep(300);
      const logged = serverTimings(server.logs);
      const serverMs = samples.flatMap((s) => {
        const ms = s.requestId === null ? undefined : logged.get(s.requestId);
        return ms === undefined ? [] : [ms];
      });

      const hit = (body: SearchBody, page: number) =>
        body.results.slice(0, 5).some((r) => r.file_id === handbookId && r.locator.page === page);
      let ai = 0;
      let quick = 0;
      const missedByAi: string[] = [];
      for (const [i, p] of PARAPHRASES.entries()) {
        if (hit((await timed(server.baseUrl, key, p.question, "quick", 5)).body, i + 1)) quick++;
        if (hit((await timed(server.baseUrl, key, p.question, "ai", 5)).body, i + 1)) ai++;
        else missedByAi.push(p.question);
      }
      const result: AiSizeResult = {
        passages: size,
        loadSeconds: round(loadSeconds),
        loadPassagesPerSecond: Math.round(loaded / loadSeconds),
        measuredQueries: samples.length,
        latencyMs: roundSummary(summarise(samples.map((s) => s.ms))),
        serverMs: serverMs.length === samples.length ? roundSummary(summarise(serverMs)) : null,
        hitAt5: { ai, quick, questions: PARAPHRASES.length },
        missedByAi,
        tenancyLeaks,
      };
      log(
        `ai ${size}: p50 ${result.latencyMs.p50} ms, p95 ${result.latencyMs.p95} ms; hit@5 ai ${ai}/30, quick ${quick}/30`,
      );
      return result;
    });
  });
}

export async function benchAiSearch(
  options: AiBenchOptions,
  log: (line: string) => void,
): Promise<AiBenchResult> {
  log(`ai: loading the word vectors in ${options.loadRuns} fresh processes ...`);
  const wordVectors = measureWordVectorLoad(options.loadRuns);
  log(`ai: word vectors load in ${wordVectors.medianLoadMs} ms, process RSS ${wordVectors.medianRssMb} MB`);
  const embedder = await LocalEmbedder.load();
  const vocab = buildVocabulary(DEFAULT_SEARCH_OPTIONS.vocabularySize);
  const sizes: AiSizeResult[] = [];
  for (const size of options.sizes) sizes.push(await benchSize(size, options, embedder, vocab, log));
  return { wordVectors, sizes };
}
