/**
 * Split-mode figures (one OS process per target, as `pnpm start:split` runs them, on the machine's
 * Postgres, RabbitMQ and Redis and an in-test S3 server):
 *
 * - ingestion throughput: a batch of text PDFs uploaded through the gateway as fast as it accepts
 *   them, timed from the first upload to the last file `ready`, with one and with two
 *   extractor-pdf processes (one file at a time each), and the ratio of the two;
 * - quick-search latency through the gateway on the Postgres full-text index, with the same
 *   corpus and queries as the all-in-one search benchmark;
 * - ranking parity (bench/split/parity.ts): the two shapes' indexes on the same real passages.
 */
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import os from "node:os";
import { promisify } from "node:util";
import { buildVocabulary, type Vocabulary } from "../corpus/corpus.ts";
import { cpuBetween, cpuSnapshot, REST_OF_MACHINE, type CpuUsage } from "../harness/cpu.ts";
import {
  client,
  createPostgresMetadataStore,
  createUserWithKey,
  makePdf,
  PostgresSearchIndex,
  type Client,
  type SplitStack,
} from "../harness/deps.ts";
import { track } from "../harness/cleanup.ts";
import { since, sleep, splitServices, withSplitStack } from "../harness/harness.ts";
import type { ParityResult } from "./parity.ts";
import type { SplitAiResult } from "./split-ai.ts";
import { documentPages, type FileBody } from "../pdf/pdf-ingestion.ts";
import {
  measureSearches,
  writeDataset,
  type SearchBenchOptions,
  type SearchMeasurement,
  type WrittenDataset,
} from "../search/search-latency.ts";
import { median, round, roundSummary, summarise, type Summary } from "../harness/stats.ts";

const run = promisify(execFile);

export interface SplitBenchOptions {
  ingestion: {
    /** PDFs per batch, and pages and lines per page of each. */
    files: number;
    pages: number;
    linesPerPage: number;
    /** Uploads in flight at once. */
    uploadConcurrency: number;
    /** extractor-pdf processes, one configuration each. */
    workers: number[];
    /** LOCUS_EXTRACT_CONCURRENCY: files each extractor process handles at once. */
    extractConcurrency: number;
    /** Batches per configuration, interleaved (1, 2, 1, 2, ...), fewer when the budget runs out. */
    rounds: number;
    /** How often GET /api/files is polled for the batch's statuses. */
    pollMs: number;
    /** No further round of every configuration starts when it would end past this (after the stacks start). */
    budgetMs: number;
    /** Longest wait for one batch to be ready; beyond it the benchmark fails. */
    readyTimeoutMs: number;
  };
  search: {
    /** Sizes after the first run only when the first size's load rate says they load within this. */
    maxLoadSeconds: number;
    /** Files written at once through PostgresSearchIndex and the metadata store. */
    writeConcurrency: number;
  };
}

export const DEFAULT_SPLIT_OPTIONS: SplitBenchOptions = {
  ingestion: {
    files: 24,
    pages: 40,
    linesPerPage: 30,
    uploadConcurrency: 4,
    workers: [1, 2],
    extractConcurrency: 1,
    rounds: 3,
    pollMs: 250,
    budgetMs: 150_000,
    readyTimeoutMs: 120_000,
  },
  search: { maxLoadSeconds: 60, writeConcurrency: 4 },
};

export interface IngestionRound {
  workers: number;
  round: number;
  /** From sending the first upload to the answer to the last one. */
  uploadSeconds: number;
  /** From sending the first upload to the first poll that saw every file of the batch ready. */
  readySeconds: number;
  /** The server's clock: the batch's last updated_at (ready) minus its first created_at. */
  serverSeconds: number;
  filesPerSecond: number;
  pagesPerSecond: number;
  serverFilesPerSecond: number;
  passages: number;
  /** Where the CPU went from the first upload to the last ready. */
  cpu: CpuUsage;
}

export interface IngestionConfigResult {
  workers: number;
  rounds: IngestionRound[];
  medianUploadSeconds: number;
  medianReadySeconds: number;
  medianFilesPerSecond: number;
  medianPagesPerSecond: number;
  medianServerFilesPerSecond: number;
  /** CPU seconds per batch by process (mean over rounds); null where it could not be read. */
  meanCpuSeconds: Record<string, number | null>;
  medianMachineBusyCores: number | null;
  /**
   * files / (CPU seconds one batch costs, every process that serves it included, / cores): the
   * files/s this machine could reach with every core busy on this work, or null when unknown.
   */
  cpuBoundFilesPerSecond: number | null;
}

export interface SplitIngestionResult {
  files: number;
  pages: number;
  linesPerPage: number;
  batchBytes: number;
  uploadConcurrency: number;
  extractConcurrency: number;
  pollMs: number;
  configs: IngestionConfigResult[];
  /** Median files/s with the most workers over that with the fewest (client clock, and server clock). */
  scalingRatio: number | null;
  serverScalingRatio: number | null;
  stoppedByTimeBudget: boolean;
  cores: number;
}

export interface SplitSearchResult extends SearchMeasurement {
  passages: number;
  files: number;
  otherTenantPassages: number;
  vocabularySize: number;
  /** Writing the dataset through PostgresSearchIndex and the Postgres metadata store. */
  loadSeconds: number;
  loadPassagesPerSecond: number;
  /** VACUUM ANALYZE after the load (what autovacuum does soon after a bulk insert); false if psql failed. */
  vacuumed: boolean;
  /**
   * What the search process logged for reading the user's postings into memory, after a first
   * search and before the measured ones (null: not within 120 s, so the searches were scored in SQL).
   */
  postingsLoadedMs: number | null;
  /** The passages table with its indexes, or null when psql could not tell. */
  tableBytes: number | null;
  /** What the search service logged for /internal/search (the gateway's own hop excluded). */
  searchServiceMs: Summary | null;
  /**
   * Client-side latency of the same search with a test key: the gateway answers it itself from its
   * sandbox after the key check and the rate limit, without calling the search service. The floor
   * of any request through the gateway.
   */
  gatewayOnlyMs: Summary;
  /** The all-in-one p50 at the same size in the same run, and split p50 over it. */
  allInOneP50Ms: number | null;
  ratioToAllInOne: number | null;
}

export interface SplitBenchResult {
  ingestion: SplitIngestionResult | null;
  search: SplitSearchResult[];
  /** Sizes not run, and why. */
  searchSkipped: { passages: number; reason: string }[];
  /** The two shapes' indexes ranking the same real passages (bench/split/parity.ts); absent in older reports. */
  parity?: ParityResult | null;
  /** ai mode through the split gateway (bench/split/split-ai.ts); absent in older reports. */
  ai?: SplitAiResult[] | null;
}

export const emptySplitResult = (): SplitBenchResult => ({
  ingestion: null,
  search: [],
  searchSkipped: [],
  parity: null,
  ai: null,
});

/* ---------------------------------------------------------------- ingestion */

/** The key the other stacks' processes are reported under while one stack is measured. */
export const IDLE_STACKS = "other split stack (idle)";

/** The measured stack's services by name, and every process of the idle stacks as one group. */
function processGroups(measured: SplitStack, idle: readonly SplitStack[]): Map<string, number[]> {
  const groups = new Map(splitServices(measured).map((name) => [name, [measured.pidOf(name)]]));
  const idlePids = idle.flatMap((s) => [
    ...splitServices(s).map((name) => s.pidOf(name)),
    ...(s.child.pid === undefined ? [] : [s.child.pid]),
  ]);
  if (idle.length > 0) groups.set(IDLE_STACKS, idlePids);
  const launcher = measured.child.pid;
  if (launcher !== undefined) groups.set("launcher", [launcher]);
  return groups;
}

/** Uploads every PDF, `concurrency` at a time; returns the file ids in upload order. */
async function uploadAll(c: Client, pdfs: readonly Buffer[], prefix: string, concurrency: number) {
  const ids: string[] = [];
  let next = 0;
  const uploader = async () => {
    while (next < pdfs.length) {
      const i = next++;
      const res = await c.upload(pdfs[i]!, `${prefix}-${String(i + 1).padStart(2, "0")}.pdf`);
      const text = await res.text();
      if (res.status !== 200)
        throw new Error(`upload ${i + 1} answered ${res.status}: ${text.slice(0, 300)}`);
      ids[i] = (JSON.parse(text) as { file: FileBody }).file.id;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, pdfs.length) }, uploader));
  return ids;
}

/** Polls the list endpoint until every file of `ids` is ready; a failed file is an error. */
async function waitAllReady(
  c: Client,
  ids: readonly string[],
  pollMs: number,
  timeoutMs: number,
): Promise<FileBody[]> {
  const deadline = performance.now() + timeoutMs;
  const wanted = new Set(ids);
  for (;;) {
    const res = await c.get("/api/files?limit=1000");
    const text = await res.text();
    if (res.status !== 200) throw new Error(`GET /api/files answered ${res.status}: ${text.slice(0, 300)}`);
    const batch = (JSON.parse(text) as FileBody[]).filter((f) => wanted.has(f.id));
    const failed = batch.find((f) => f.status === "failed");
    if (failed) throw new Error(`file ${failed.id} failed: ${failed.error?.code}: ${failed.error?.message}`);
    if (batch.length === wanted.size && batch.every((f) => f.status === "ready")) return batch;
    if (performance.now() > deadline) {
      const counts = new Map<string, number>();
      for (const f of batch) counts.set(f.status, (counts.get(f.status) ?? 0) + 1);
      throw new Error(
        `batch not ready after ${timeoutMs} ms: ${[...counts].map(([s, n]) => `${n} ${s}`).join(", ")} of ${wanted.size}`,
      );
    }
    await sleep(pollMs);
  }
}

async function ingestBatch(
  stack: SplitStack,
  idle: readonly SplitStack[],
  c: Client,
  pdfs: readonly Buffer[],
  workers: number,
  roundNo: number,
  options: SplitBenchOptions["ingestion"],
): Promise<IngestionRound> {
  const before = cpuSnapshot(processGroups(stack, idle));
  const started = performance.now();
  const ids = await uploadAll(c, pdfs, `w${workers}-r${roundNo}`, options.uploadConcurrency);
  const uploadMs = since(started);
  const ready = await waitAllReady(c, ids, options.pollMs, options.readyTimeoutMs);
  const readyMs = since(started);
  const cpu = cpuBetween(before, cpuSnapshot(processGroups(stack, idle)));
  for (const f of ready) {
    if (f.page_count !== options.pages)
      throw new Error(`a ${options.pages}-page PDF was indexed as ${f.page_count} pages`);
    if (!f.passage_count) throw new Error(`a ${options.pages}-page PDF was indexed with no passages`);
  }
  const serverMs =
    Math.max(...ready.map((f) => Date.parse(f.updated_at))) -
    Math.min(...ready.map((f) => Date.parse(f.created_at)));
  const n = pdfs.length;
  return {
    workers,
    round: roundNo,
    uploadSeconds: round2(uploadMs / 1000),
    readySeconds: round2(readyMs / 1000),
    serverSeconds: round2(serverMs / 1000),
    filesPerSecond: round(n / (readyMs / 1000)),
    pagesPerSecond: round((n * options.pages) / (readyMs / 1000)),
    serverFilesPerSecond: round(n / (serverMs / 1000)),
    passages: ready.reduce((s, f) => s + (f.passage_count ?? 0), 0),
    cpu,
  };
}

const round2 = (v: number) => Math.round(v * 100) / 100;

function summariseConfig(workers: number, rounds: IngestionRound[], files: number): IngestionConfigResult {
  const names = new Set(rounds.flatMap((r) => Object.keys(r.cpu.seconds)));
  const meanCpuSeconds: Record<string, number | null> = {};
  for (const name of names) {
    const values = rounds.map((r) => r.cpu.seconds[name]);
    meanCpuSeconds[name] = values.every((v) => typeof v === "number")
      ? round2(values.reduce((a, b) => a + b, 0) / values.length)
      : null;
  }
  const busy = rounds.map((r) => r.cpu.machineBusyCores);
  const serving = Object.entries(meanCpuSeconds).filter(
    ([name]) => name !== IDLE_STACKS && name !== REST_OF_MACHINE,
  );
  const cores = rounds[0]?.cpu.cores ?? os.availableParallelism();
  const perBatch = serving.every(([, v]) => v !== null)
    ? serving.reduce((sum, [, v]) => sum + (v ?? 0), 0)
    : null;
  return {
    workers,
    rounds,
    medianUploadSeconds: round2(median(rounds.map((r) => r.uploadSeconds))),
    medianReadySeconds: round2(median(rounds.map((r) => r.readySeconds))),
    medianFilesPerSecond: round(median(rounds.map((r) => r.filesPerSecond))),
    medianPagesPerSecond: round(median(rounds.map((r) => r.pagesPerSecond))),
    medianServerFilesPerSecond: round(median(rounds.map((r) => r.serverFilesPerSecond))),
    meanCpuSeconds,
    medianMachineBusyCores: busy.every((b) => b !== null) ? round2(median(busy)) : null,
    cpuBoundFilesPerSecond: perBatch ? round(files / (perBatch / cores)) : null,
  };
}

interface Started {
  workers: number;
  stack: SplitStack;
  client: Client;
}

/** Starts one stack per configuration, nested so that every one is stopped whatever happens. */
async function withStacks<T>(
  workerCounts: readonly number[],
  options: SplitBenchOptions["ingestion"],
  fn: (stacks: Started[]) => Promise<T>,
  log: (line: string) => void,
  started: Started[] = [],
): Promise<T> {
  const [workers, ...rest] = workerCounts;
  if (workers === undefined) return fn(started);
  log(`split ingestion: starting a split stack with ${workers} extractor-pdf process(es) ...`);
  return withSplitStack(
    {
      extractors: workers,
      env: {
        LOCUS_RATE_LIMIT_PRO: "100000",
        LOCUS_EXTRACT_CONCURRENCY: String(options.extractConcurrency),
      },
    },
    async (stack) => {
      const { key } = await track(createUserWithKey(stack.dataDir, { plan: "pro", env: stack.cliEnv }));
      return withStacks(rest, options, fn, log, [
        ...started,
        { workers, stack, client: client(stack.baseUrl, key) },
      ]);
    },
  );
}

export async function benchSplitIngestion(
  options: SplitBenchOptions["ingestion"],
  log: (line: string) => void,
): Promise<SplitIngestionResult> {
  const vocab = buildVocabulary(5_000);
  log(`split ingestion: generating ${options.files} PDFs of ${options.pages} pages ...`);
  // Made before any clock starts and reused by every round: the generator would compete for the cores.
  const pdfs: Buffer[] = [];
  for (let i = 0; i < options.files; i++)
    pdfs.push(await makePdf({ pages: documentPages(vocab, 300 + i, options.pages, options.linesPerPage) }));
  const warmup = await Promise.all(
    [0, 1, 2, 3].map((i) => makePdf({ pages: documentPages(vocab, 950 + i, 3, options.linesPerPage) })),
  );

  const workerCounts = [...new Set(options.workers)].sort((a, b) => a - b);
  return withStacks(
    workerCounts,
    options,
    async (stacks) => {
      // Unmeasured: a few small files, then one whole batch, through each stack, so that every
      // extractor has loaded pdf.js and every process is warm before the clock starts (the first
      // batch after start-up runs about 10% slower than the next ones).
      for (const s of stacks) {
        log(`split ingestion, ${s.workers} worker(s): warm-up batch (not measured) ...`);
        for (const files of [warmup, pdfs]) {
          const ids = await uploadAll(s.client, files, "warmup", options.uploadConcurrency);
          await waitAllReady(s.client, ids, 50, options.readyTimeoutMs);
        }
      }
      const rounds = new Map<number, IngestionRound[]>(stacks.map((s) => [s.workers, []]));
      const budgetStart = performance.now();
      let longestPassMs = 0;
      let stoppedByTimeBudget = false;
      for (let n = 1; n <= options.rounds; n++) {
        if (n > 1 && since(budgetStart) + longestPassMs > options.budgetMs) {
          stoppedByTimeBudget = true;
          break;
        }
        const passStart = performance.now();
        // Interleaved, so that a slow spell of the shared machine weighs on every configuration.
        for (const s of stacks) {
          const idle = stacks.filter((o) => o !== s).map((o) => o.stack);
          const r = await ingestBatch(s.stack, idle, s.client, pdfs, s.workers, n, options);
          rounds.get(s.workers)!.push(r);
          log(
            `split ingestion, ${s.workers} worker(s), round ${n}: ${r.filesPerSecond} files/s, ` +
              `${r.pagesPerSecond} pages/s (ready after ${r.readySeconds} s, uploads took ${r.uploadSeconds} s, ` +
              `machine ${r.cpu.machineBusyCores ?? "?"} of ${r.cpu.cores} cores busy, ` +
              `${r.cpu.seconds[REST_OF_MACHINE] ?? "?"} CPU s of it outside this benchmark's processes and servers)`,
          );
        }
        longestPassMs = Math.max(longestPassMs, since(passStart));
      }
      const configs = stacks.map((s) => summariseConfig(s.workers, rounds.get(s.workers)!, options.files));
      const fewest = configs[0];
      const most = configs.at(-1);
      const ratio = (a: number | undefined, b: number | undefined) =>
        a !== undefined && b !== undefined && configs.length > 1 ? round2(a / b) : null;
      return {
        files: options.files,
        pages: options.pages,
        linesPerPage: options.linesPerPage,
        batchBytes: pdfs.reduce((s, p) => s + p.length, 0),
        uploadConcurrency: options.uploadConcurrency,
        extractConcurrency: options.extractConcurrency,
        pollMs: options.pollMs,
        configs,
        scalingRatio: ratio(most?.medianFilesPerSecond, fewest?.medianFilesPerSecond),
        serverScalingRatio: ratio(most?.medianServerFilesPerSecond, fewest?.medianServerFilesPerSecond),
        stoppedByTimeBudget,
        cores: os.availableParallelism(),
      };
    },
    log,
  );
}

/* ---------------------------------------------------------------- search */

/** One SQL statement through psql (the benchmark has no Postgres driver of its own); null on failure. */
async function psql(databaseUrl: string, statement: string): Promise<string | null> {
  try {
    const { stdout } = await run(
      "psql",
      [databaseUrl, "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", statement],
      {
        timeout: 120_000,
      },
    );
    return stdout.trim();
  } catch (err) {
    console.error(
      `bench: psql failed (${statement}):`,
      err instanceof Error ? err.message.split("\n")[0] : err,
    );
    return null;
  }
}

const SANDBOX_WARMUP = 50;
const SANDBOX_QUERIES = 200;

/** Sequential sandbox searches (a test key): what the gateway costs on its own, in ms. */
async function sandboxLatency(baseUrl: string, key: string, limit: number): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < SANDBOX_WARMUP + SANDBOX_QUERIES; i++) {
    const started = performance.now();
    const res = await fetch(`${baseUrl}/api/search?q=revenue&limit=${limit}&mode=quick`, {
      headers: { Authorization: `Bearer ${key}` },
      signal: AbortSignal.timeout(10_000),
    });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`sandbox search answered ${res.status}: ${body.slice(0, 300)}`);
    if (i >= SANDBOX_WARMUP) ms.push(since(started));
  }
  return ms;
}

/** How long the search service took to read the user's postings, from its log line; null if none. */
function postingsLoadMs(logs: readonly string[]): number | null {
  for (const line of logs) {
    if (!line.includes('"service":"search"') || !line.includes("postings are loaded")) continue;
    try {
      const entry = JSON.parse(line) as { ms?: unknown };
      if (typeof entry.ms === "number") return entry.ms;
    } catch {
      // not a JSON line
    }
  }
  return null;
}

/**
 * A search to start the user's postings loading in the search process, then a wait for its log
 * line: the searches measured are those of a user whose postings are held (every search but the
 * ones in the first seconds after a process starts). Null if the line did not come in time.
 */
async function awaitPostingsLoaded(
  stack: SplitStack,
  key: string,
  timeoutMs: number,
): Promise<number | null> {
  const res = await fetch(`${stack.baseUrl}/api/search?q=the&mode=quick&limit=1`, {
    headers: { Authorization: `Bearer ${key}` },
  });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`the first search answered ${res.status}`);
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const ms = postingsLoadMs(stack.logs);
    if (ms !== null || performance.now() > deadline) return ms;
    await sleep(100);
  }
}

/** The ms the search service logged for /internal/search, in order. */
function searchServiceTimings(logs: readonly string[]): number[] {
  const ms: number[] = [];
  for (const line of logs) {
    if (!line.includes('"service":"search"') || !line.includes('"path":"/internal/search"')) continue;
    try {
      const entry = JSON.parse(line) as { ms?: unknown };
      if (typeof entry.ms === "number") ms.push(entry.ms);
    } catch {
      // not a JSON line
    }
  }
  return ms;
}

/**
 * The user and its key through the CLI (with the stack's environment), then the dataset written
 * into the stack's schema through the Postgres adapters while the stack runs.
 */
async function loadDataset(
  stack: SplitStack,
  databaseUrl: string,
  size: number,
  vocab: Vocabulary,
  options: SearchBenchOptions,
  splitOptions: SplitBenchOptions["search"],
  log: (line: string) => void,
): Promise<{ key: string; data: WrittenDataset; loadSeconds: number }> {
  const { email, key } = await createUserWithKey(stack.dataDir, { plan: "enterprise", env: stack.cliEnv });
  log(
    `split search ${size}: writing ${size} passages (+${Math.round(size * options.otherTenantShare)} of another user) into Postgres ...`,
  );
  const started = performance.now();
  const store = createPostgresMetadataStore({ connectionString: databaseUrl, schema: stack.schema });
  let data: WrittenDataset;
  try {
    await store.migrate();
    const user = await store.findUserByEmail(email);
    if (!user) throw new Error(`the CLI did not create ${email}`);
    const other = await store.createUser({
      email: `other-tenant-${randomUUID()}@example.com`,
      plan: "pro",
    });
    const index = new PostgresSearchIndex({ connectionString: databaseUrl, schema: stack.schema });
    try {
      data = await writeDataset(
        store,
        index,
        { userId: user.id, otherUserId: other.id },
        size,
        vocab,
        options,
        splitOptions.writeConcurrency,
      );
    } finally {
      await index.close();
    }
  } finally {
    await store.close();
  }
  return { key, data, loadSeconds: since(started) / 1000 };
}

async function benchSplitSearchSize(
  size: number,
  options: SearchBenchOptions,
  splitOptions: SplitBenchOptions["search"],
  log: (line: string) => void,
): Promise<SplitSearchResult> {
  const vocab = buildVocabulary(options.vocabularySize);
  log(`split search ${size}: starting a split stack ...`);
  return withSplitStack({ extractors: 1, env: { LOCUS_RATE_LIMIT_ENTERPRISE: "100000" } }, async (stack) => {
    const databaseUrl = stack.cliEnv.DATABASE_URL;
    if (!databaseUrl) throw new Error("the split stack gave no DATABASE_URL");
    // Tracked: an interruption lets it stop (at the next file) before the schema is dropped.
    const { key, data, loadSeconds } = await track(
      loadDataset(stack, databaseUrl, size, vocab, options, splitOptions, log),
    );
    const loaded = size + data.otherTenantPassages;
    log(
      `split search ${size}: loaded in ${loadSeconds.toFixed(1)} s (${Math.round(loaded / loadSeconds)} passages/s); VACUUM ANALYZE ...`,
    );
    const table = `${stack.schema}.passages`;
    const vacuumed = (await psql(databaseUrl, `VACUUM ANALYZE ${table}`)) !== null;
    const bytes = await psql(databaseUrl, `SELECT pg_total_relation_size('${table}')`);

    const postingsLoadedMs = await awaitPostingsLoaded(stack, key, 120_000);
    log(
      `split search ${size}: ${postingsLoadedMs === null ? "no postings loaded within 120 s" : `postings loaded in ${postingsLoadedMs} ms`}`,
    );
    const measured = await measureSearches(stack, key, vocab, size, data.userFileIds, options, "gateway");
    const service = searchServiceTimings(stack.logs).slice(-measured.measuredQueries);
    const { key: testKey } = await track(
      createUserWithKey(stack.dataDir, { plan: "enterprise", type: "test", env: stack.cliEnv }),
    );
    const gatewayOnly = await sandboxLatency(stack.baseUrl, testKey, options.limit);
    const result: SplitSearchResult = {
      passages: size,
      files: data.files,
      otherTenantPassages: data.otherTenantPassages,
      vocabularySize: options.vocabularySize,
      loadSeconds: Math.round(loadSeconds * 10) / 10,
      loadPassagesPerSecond: Math.round(loaded / loadSeconds),
      vacuumed,
      postingsLoadedMs,
      tableBytes: bytes !== null && /^\d+$/.test(bytes) ? Number(bytes) : null,
      ...measured,
      searchServiceMs: service.length === measured.measuredQueries ? roundSummary(summarise(service)) : null,
      gatewayOnlyMs: roundSummary(summarise(gatewayOnly)),
      allInOneP50Ms: null,
      ratioToAllInOne: null,
    };
    log(
      `split search ${size}: ${result.measuredQueries} queries, p50 ${result.overall.latencyMs.p50} ms, p95 ${result.overall.latencyMs.p95} ms`,
    );
    return result;
  });
}

/**
 * Each size in `options.sizes` on a fresh split stack; sizes after the first only when the first
 * one's load rate says they load within `maxLoadSeconds`. Results go into `into` as they come, so
 * a crash at one size keeps the figures of the others.
 */
export async function benchSplitSearch(
  options: SearchBenchOptions,
  splitOptions: SplitBenchOptions["search"],
  into: SplitBenchResult,
  log: (line: string) => void,
): Promise<void> {
  const sizes = [...options.sizes].sort((a, b) => a - b);
  for (const size of sizes) {
    const first = into.search[0];
    if (first) {
      const rate = first.loadPassagesPerSecond;
      const projected = (size * (1 + options.otherTenantShare)) / rate;
      if (projected > splitOptions.maxLoadSeconds) {
        const reason = `loading would take about ${Math.round(projected)} s at ${rate.toLocaleString("en")} passages/s (limit ${splitOptions.maxLoadSeconds} s)`;
        log(`split search ${size}: skipped: ${reason}`);
        into.searchSkipped.push({ passages: size, reason });
        continue;
      }
    }
    into.search.push(await benchSplitSearchSize(size, options, splitOptions, log));
  }
}

/** Fills in the all-in-one p50 at the same size, from the same run, and the ratio to it. */
export function compareWithAllInOne(
  split: SplitBenchResult,
  allInOne: readonly { passages: number; overall: { latencyMs: Summary } }[],
): void {
  for (const s of split.search) {
    const a = allInOne.find((x) => x.passages === s.passages);
    if (!a) continue;
    s.allInOneP50Ms = a.overall.latencyMs.p50;
    s.ratioToAllInOne = round(s.overall.latencyMs.p50 / a.overall.latencyMs.p50);
  }
}
