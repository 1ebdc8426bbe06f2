import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { assertRunning, track } from "../harness/cleanup.ts";
import {
  createSqliteMetadataStore,
  createUserWithKey,
  metricValue,
  scrapeMetrics,
  type Embedder,
  PARAPHRASES,
  PARAPHRASES_DEV,
  SqliteSearchIndex,
  withVectors,
  type MetadataStore,
  type SearchIndex,
} from "../harness/deps.ts";
import { benchEmbedder, serverTimings, since, sleep, withServer, withTempDir } from "../harness/harness.ts";
import {
  REAL_TEXT_SOURCES,
  realTextAvailable,
  realTextDigest,
  realTextFiles,
  realTextPassages,
  realTextQueries,
  type RealPassage,
} from "../corpus/real-text.ts";
import {
  asAsync,
  DEFAULT_SEARCH_OPTIONS,
  fileRecord,
  type ExtractedPassage,
} from "../search/search-latency.ts";
import { median, round, roundSummary, summarise, type Summary } from "../harness/stats.ts";
import { measureVectorIndex, type VectorIndexResult } from "./vector-index.ts";

/**
 * ai mode with the default engines (the offline sentence encoder, or the word vectors with
 * LOCUS_EMBEDDER=local; the extractive summary), all-in-one: latency
 * over HTTP at 10k and 100k passages of real text (bench/corpus/real-text.ts), and how often the right
 * passage is in the top five for questions asked in other words, against quick mode on the same
 * questions: the development set (PARAPHRASES_DEV, to tune on) and the test set (PARAPHRASES, the
 * figure that counts) apart. Also what loading the word vectors costs a process.
 */
export interface AiBenchOptions {
  sizes: number[];
  /** Measured ai searches per size: the paraphrase questions (test and dev in turn) and keyword queries, alternating. */
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
  /** Paraphrase questions whose statement is in the top 5, for each set. */
  hitAt5: { dev: HitCount; test: HitCount };
  /** Test questions whose statement ai mode left out of the top 5. */
  missedByAi: string[];
  missedByAiDev: string[];
  tenancyLeaks: number;
  /** The approximate vector index against the exact scan, in-process on the same passages (runs since 2026-11-28). */
  vectorIndex?: VectorIndexResult;
  /** Measured ai searches the server answered by scanning every vector (0: all by its approximate index). */
  exactSearchesMeasured?: number;
  /** The server's resident memory after the measured searches, and its peak (VmRSS, VmHWM). */
  serverMemoryMb?: { rss: number; peak: number } | null;
}

export interface HitCount {
  ai: number;
  quick: number;
  questions: number;
}

/** The distractor corpus: where its text comes from, and a digest of what was indexed at the largest size. */
export interface AiCorpus {
  sources: { pkg: string; version: string; licence: string; what: string }[];
  passagesAvailable: number;
  /** SHA-256 of the passages the measured user and the other one held at the largest size, in order. */
  digest: string;
  passagesDigested: number;
}

export interface AiBenchResult {
  /** The engine of the passages' and questions' vectors (absent in reports from before it was recorded: the word vectors). */
  engine?: string;
  wordVectors: { medianLoadMs: number; medianRssMb: number; baselineRssMb: number; words: number };
  corpus: AiCorpus;
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

export async function timed(
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

/** The statements of the handbook, one a page: the test set on pages 1-30, the dev set on 31-60. */
export const HANDBOOK = [
  ...PARAPHRASES.map((p) => ({ ...p, set: "test" as const })),
  ...PARAPHRASES_DEV.map((p) => ({ ...p, set: "dev" as const })),
].map((p, i) => ({ ...p, page: i + 1 }));

/** The sixty statements, one passage each on pages of their own, in one file of the measured user. */
export const statementPassages = (): ExtractedPassage[] =>
  HANDBOOK.map((p) => ({
    content: p.statement,
    locator: { page: p.page, line: 1, line_end: 1, source: "text" as const },
  }));

/** Passages per distractor file, as the quick-search datasets have. */
export const PASSAGES_PER_FILE = 50;

/**
 * Writes real-text distractor files through the real adapters, as the indexer would: ready file
 * records through `createFile` (when a store is given), passages through `replaceFilePassages`.
 * Returns the ids of the files written.
 */
export async function writeRealTextFiles(
  store: Pick<MetadataStore, "createFile"> | null,
  index: Pick<SearchIndex, "replaceFilePassages">,
  userId: string,
  passages: readonly RealPassage[],
  firstFileNumber = 0,
): Promise<string[]> {
  const ids: string[] = [];
  const now = Date.now();
  const files = realTextFiles(passages, PASSAGES_PER_FILE);
  for (const [n, filePassages] of files.entries()) {
    assertRunning();
    const fileId = randomUUID();
    // Distinct, increasing creation times, as real uploads have.
    const at = new Date(now - (files.length - n) * 1000).toISOString();
    await store?.createFile(fileRecord(fileId, userId, firstFileNumber + n, filePassages.length, at));
    await index.replaceFilePassages({ userId, fileId }, asAsync(filePassages));
    ids.push(fileId);
  }
  return ids;
}

/**
 * An ai dataset as both shapes' benchmarks write it, through the given adapters: `size` real-text
 * passages of the user named `email`, 25% more of another user, and the handbook of the sixty
 * statements, every passage with its local vector (as the indexer writes them).
 */
/** A process's resident memory and its peak, from /proc (null where it cannot be read). */
function processMemoryMb(pid: number | undefined): { rss: number; peak: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
    const [rss, peak] = [kb("VmRSS"), kb("VmHWM")];
    return Number.isFinite(rss) && Number.isFinite(peak)
      ? { rss: Math.round(rss / 1024), peak: Math.round(peak / 1024) }
      : null;
  } catch {
    return null;
  }
}

export async function writeAiDataset(
  store: MetadataStore,
  index: Pick<SearchIndex, "replaceFilePassages">,
  embedder: Embedder,
  email: string,
  size: number,
): Promise<{ userId: string; userFileIds: Set<string>; handbookId: string; loaded: number }> {
  const otherTenantPassages = Math.round(size * DEFAULT_SEARCH_OPTIONS.otherTenantShare);
  const handbookId = randomUUID();
  await store.migrate();
  const user = await store.findUserByEmail(email);
  if (!user) throw new Error(`the CLI did not create ${email}`);
  const other = await store.createUser({ email: `other-tenant-${randomUUID()}@example.com`, plan: "pro" });
  // Passages reach the index as the indexer hands them over: with their local vectors.
  const embedding: Pick<SearchIndex, "replaceFilePassages"> = {
    replaceFilePassages: (file, passages) =>
      index.replaceFilePassages(file, withVectors(passages, { local: embedder })),
  };
  // The measured user's passages come first in the corpus, the other user's right after.
  const corpus = realTextPassages(size + otherTenantPassages);
  const written = await track(writeRealTextFiles(store, embedding, user.id, corpus.slice(0, size)));
  await track(writeRealTextFiles(store, embedding, other.id, corpus.slice(size)));
  await store.createFile({
    ...fileRecord(handbookId, user.id, 0, HANDBOOK.length, new Date().toISOString()),
    originalName: "handbook.pdf",
  });
  await embedding.replaceFilePassages({ userId: user.id, fileId: handbookId }, asAsync(statementPassages()));
  return {
    userId: user.id,
    userFileIds: new Set([...written, handbookId]),
    handbookId,
    loaded: size + otherTenantPassages + HANDBOOK.length,
  };
}

async function benchSize(
  size: number,
  options: AiBenchOptions,
  embedder: Embedder,
  keywordQueries: readonly string[],
  log: (line: string) => void,
): Promise<AiSizeResult> {
  return withTempDir("locus-bench-ai-", async (dataDir) => {
    log(`ai ${size}: writing ${size} real-text passages with their vectors (+25% of another user) ...`);
    const { email, key } = await createUserWithKey(dataDir, { plan: "enterprise" });
    const started = performance.now();
    const store = createSqliteMetadataStore(join(dataDir, "metadata.sqlite"));
    const index = new SqliteSearchIndex(join(dataDir, "index.sqlite"));
    let userId: string;
    let userFileIds: Set<string>;
    let handbookId: string;
    let loaded: number;
    try {
      ({ userId, userFileIds, handbookId, loaded } = await writeAiDataset(
        store,
        index,
        embedder,
        email,
        size,
      ));
    } finally {
      await index.close();
      await store.close();
    }
    const loadSeconds = since(started) / 1000;
    log(
      `ai ${size}: loaded in ${loadSeconds.toFixed(1)} s; the approximate index against the exact scan ...`,
    );
    const vectorIndex = await measureVectorIndex(
      join(dataDir, "index.sqlite"),
      userId,
      size + HANDBOOK.length,
      embedder,
      log,
    );
    log(`ai ${size}: starting the server`);

    return withServer(
      dataDir,
      { LOCUS_RATE_LIMIT_ENTERPRISE: "100000", LOCUS_METRICS_PORT: "0" },
      async (server) => {
        const metricsUrl = server.logs.map((line) => /"metricsUrl":"([^"]+)"/.exec(line)?.[1]).find(Boolean);
        if (!metricsUrl) throw new Error("the server's start line names no metricsUrl");
        // Test and dev questions in turn.
        const questions = PARAPHRASES.flatMap((p, i) => [
          p.question,
          PARAPHRASES_DEV[i]?.question ?? p.question,
        ]);
        for (let i = 0; i < options.warmup; i++) {
          await timed(
            server.baseUrl,
            key,
            keywordQueries[i % keywordQueries.length] ?? "report",
            "ai",
            options.limit,
          );
        }
        // Measured once the server's own approximate index of the user has been built (in the background).
        const searchesBy = async (method: string) =>
          metricValue(await scrapeMetrics(metricsUrl), "locus_vector_searches_total", {
            method,
          });
        const graphWait = performance.now();
        while ((await searchesBy("approximate")) === 0) {
          assertRunning();
          if (performance.now() - graphWait > 15 * 60_000)
            throw new Error("the server's approximate index was not built in 15 minutes");
          await sleep(1_000);
          await timed(server.baseUrl, key, keywordQueries[0] ?? "report", "ai", options.limit);
        }
        const exactBefore = await searchesBy("exact");
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
        const exactDuring = (await searchesBy("exact")) - exactBefore;
        const serverMemory = processMemoryMb(server.child.pid);
        await sleep(300);
        const logged = serverTimings(server.logs);
        const serverMs = samples.flatMap((s) => {
          const ms = s.requestId === null ? undefined : logged.get(s.requestId);
          return ms === undefined ? [] : [ms];
        });

        const hit = (body: SearchBody, page: number) =>
          body.results.slice(0, 5).some((r) => r.file_id === handbookId && r.locator.page === page);
        const hitAt5 = {
          dev: { ai: 0, quick: 0, questions: PARAPHRASES_DEV.length },
          test: { ai: 0, quick: 0, questions: PARAPHRASES.length },
        };
        const missed = { dev: [] as string[], test: [] as string[] };
        for (const p of HANDBOOK) {
          if (hit((await timed(server.baseUrl, key, p.question, "quick", 5)).body, p.page))
            hitAt5[p.set].quick++;
          if (hit((await timed(server.baseUrl, key, p.question, "ai", 5)).body, p.page)) hitAt5[p.set].ai++;
          else missed[p.set].push(p.question);
        }
        const result: AiSizeResult = {
          passages: size,
          loadSeconds: round(loadSeconds),
          loadPassagesPerSecond: Math.round(loaded / loadSeconds),
          measuredQueries: samples.length,
          latencyMs: roundSummary(summarise(samples.map((s) => s.ms))),
          serverMs: serverMs.length === samples.length ? roundSummary(summarise(serverMs)) : null,
          hitAt5,
          missedByAi: missed.test,
          missedByAiDev: missed.dev,
          tenancyLeaks,
          vectorIndex,
          exactSearchesMeasured: exactDuring,
          serverMemoryMb: serverMemory,
        };
        const { dev, test } = hitAt5;
        log(
          `ai ${size}: p50 ${result.latencyMs.p50} ms, p95 ${result.latencyMs.p95} ms; hit@5 test: ai ${test.ai}/${test.questions}, quick ${test.quick}/${test.questions}; dev: ai ${dev.ai}/${dev.questions}, quick ${dev.quick}/${dev.questions}`,
        );
        return result;
      },
    );
  });
}

export async function benchAiSearch(
  options: AiBenchOptions,
  log: (line: string) => void,
): Promise<AiBenchResult> {
  log(`ai: loading the word vectors in ${options.loadRuns} fresh processes ...`);
  const wordVectors = measureWordVectorLoad(options.loadRuns);
  log(`ai: word vectors load in ${wordVectors.medianLoadMs} ms, process RSS ${wordVectors.medianRssMb} MB`);
  const embedder = await benchEmbedder();
  const largest = Math.max(...options.sizes);
  const needed = largest + Math.round(largest * DEFAULT_SEARCH_OPTIONS.otherTenantShare);
  const corpus: AiCorpus = {
    sources: REAL_TEXT_SOURCES.map(({ pkg, version, licence, what }) => ({ pkg, version, licence, what })),
    passagesAvailable: realTextAvailable(log),
    digest: realTextDigest(needed),
    passagesDigested: needed,
  };
  log(
    `ai: distractors are real text, ${needed} passages of ${corpus.passagesAvailable}, sha256 ${corpus.digest}`,
  );
  // Keyword queries drawn from what the smallest dataset's user holds, so every size can find them.
  const keywordQueries = realTextQueries(
    realTextPassages(Math.min(...options.sizes)),
    options.queries,
    7,
  ).map((q) => q.q);
  const sizes: AiSizeResult[] = [];
  for (const size of options.sizes) sizes.push(await benchSize(size, options, embedder, keywordQueries, log));
  return { engine: embedder.name, wordVectors, corpus, sizes };
}

/** hit@5 of one size by set; reports from before the dev set held one figure, the test set's. */
export function hitsBySet(s: AiSizeResult): { dev: HitCount | null; test: HitCount } {
  const h = s.hitAt5 as AiSizeResult["hitAt5"] | HitCount;
  return "test" in h ? h : { dev: null, test: h };
}
