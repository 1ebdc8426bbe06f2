import { randomUUID } from "node:crypto";
import { statSync } from "node:fs";
import { join } from "node:path";
import {
  ABSENT_WORDS,
  buildVocabulary,
  pick,
  PLANTED_PHRASES,
  passageText,
  rng,
  type Vocabulary,
} from "../corpus/corpus.ts";
import {
  createSqliteMetadataStore,
  createUserWithKey,
  SqliteSearchIndex,
  type FileRecord,
  type MetadataStore,
  type SearchIndex,
} from "../harness/deps.ts";
import { assertRunning, track } from "../harness/cleanup.ts";
import { serverTimings, since, sleep, withServer, withTempDir } from "../harness/harness.ts";
import { round, roundSummary, summarise, type Summary } from "../harness/stats.ts";

export const QUERY_CLASSES = ["common-1", "common-2", "common-3", "rare", "phrase", "absent"] as const;
export type QueryClass = (typeof QUERY_CLASSES)[number];

export const QUERY_CLASS_DESCRIPTIONS: Record<QueryClass, string> = {
  "common-1": "1 word of the 400 most frequent",
  "common-2": "2 words of the 400 most frequent",
  "common-3": "3 words of the 400 most frequent",
  rare: "1 word of the least frequent 30% of the vocabulary",
  phrase: "a planted 3-word phrase (in 3 passages of the user, 2 of another)",
  absent: "1 word that is in no passage",
};

export interface SearchBenchOptions {
  /** Passages of the measured user, one dataset (and one server) per size. */
  sizes: number[];
  queries: number;
  warmup: number;
  limit: number;
  vocabularySize: number;
  /** Passages of a second user, as a share of the measured user's. */
  otherTenantShare: number;
  /** Most time for the measured queries of one size; the run stops early (and says so) beyond it. */
  queryBudgetMs: number;
}

export const DEFAULT_SEARCH_OPTIONS: SearchBenchOptions = {
  sizes: [10_000, 100_000],
  queries: 300,
  warmup: 60,
  limit: 50,
  vocabularySize: 5_000,
  otherTenantShare: 0.25,
  queryBudgetMs: 120_000,
};

const PASSAGES_PER_FILE = 50;
export const PLANTS_PER_PHRASE = 3;
const OTHER_TENANT_PLANTS = 2;
const COMMON_RANKS = 400;
const REQUEST_TIMEOUT_MS = 10_000;

export interface ClassResult {
  queries: number;
  /** Client-side: from sending the request to the last byte of the response. */
  latencyMs: Summary;
  /** What the server logged for the same requests (gateway middleware to response finish). */
  serverMs: Summary | null;
  meanResults: number;
}

export interface SearchSizeResult {
  passages: number;
  files: number;
  otherTenantPassages: number;
  vocabularySize: number;
  /** Writing the dataset through the real adapters before the server starts. */
  loadSeconds: number;
  loadPassagesPerSecond: number;
  indexBytes: number;
  warmupQueries: number;
  measuredQueries: number;
  stoppedByTimeBudget: boolean;
  overall: ClassResult;
  byClass: Partial<Record<QueryClass, ClassResult>>;
  /** The five slowest measured queries (client-side ms), to show what the tail is made of. */
  slowest: { cls: QueryClass; q: string; ms: number; results: number }[];
  checks: {
    /** Results naming a file that is not the caller's: must be 0. */
    tenancyLeaks: number;
    /** Phrase queries whose top result contains the phrase and that found exactly the user's plantings. */
    phraseQueriesExact: string;
    /** Absent-word queries with zero results. */
    absentQueriesEmpty: string;
  };
}

export interface Query {
  cls: QueryClass;
  q: string;
}

function commonWords(vocab: Vocabulary, random: () => number, n: number): string {
  const words = new Set<string>();
  while (words.size < n) words.add(vocab.words[Math.floor(random() * COMMON_RANKS)]!);
  return [...words].join(" ");
}

/** `count` queries, classes in equal shares, in a shuffled (seeded) order. */
export function makeQueries(vocab: Vocabulary, count: number, seed: number): Query[] {
  const random = rng(seed);
  const rareFrom = Math.floor(vocab.words.length * 0.7);
  const queries: Query[] = [];
  for (let i = 0; i < count; i++) {
    const cls = QUERY_CLASSES[i % QUERY_CLASSES.length]!;
    let q: string;
    switch (cls) {
      case "common-1":
        q = commonWords(vocab, random, 1);
        break;
      case "common-2":
        q = commonWords(vocab, random, 2);
        break;
      case "common-3":
        q = commonWords(vocab, random, 3);
        break;
      case "rare":
        q = vocab.words[rareFrom + Math.floor(random() * (vocab.words.length - rareFrom))]!;
        break;
      case "phrase":
        q = pick(random, PLANTED_PHRASES);
        break;
      case "absent":
        q = pick(random, ABSENT_WORDS);
        break;
    }
    queries.push({ cls, q });
  }
  for (let i = queries.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [queries[i], queries[j]] = [queries[j]!, queries[i]!];
  }
  return queries;
}

/** Where each phrase is planted among `count` passages: spread evenly, never twice in one passage. */
export function plantings(count: number, perPhrase: number): Map<number, string> {
  const plants = new Map<number, string>();
  const slots = PLANTED_PHRASES.length * perPhrase;
  PLANTED_PHRASES.forEach((phrase, j) => {
    for (let i = 0; i < perPhrase; i++) {
      plants.set(Math.floor((count * (i * PLANTED_PHRASES.length + j + 0.5)) / slots), phrase);
    }
  });
  return plants;
}

export const fileRecord = (
  id: string,
  userId: string,
  n: number,
  passages: number,
  at: string,
): FileRecord => ({
  id,
  userId,
  originalName: `report-${String(n).padStart(5, "0")}.pdf`,
  fileType: "pdf",
  mimeType: "application/pdf",
  sizeBytes: 40_000 + passages * 700,
  blobKey: `files/${userId}/${id}`,
  status: "ready",
  error: null,
  pageCount: Math.ceil(passages / 6),
  durationS: null,
  passageCount: passages,
  progress: 1,
  metadata: {},
  createdAt: at,
  updatedAt: at,
});

/** An async view of a sync iterable: what replaceFilePassages takes, with nothing to wait for. */
export function asAsync<T>(items: Iterable<T>): AsyncIterable<T> {
  const iterator = items[Symbol.iterator]();
  return { [Symbol.asyncIterator]: () => ({ next: () => Promise.resolve(iterator.next()) }) };
}

/** A passage as replaceFilePassages takes it (the contracts' ExtractedPassage). */
export type ExtractedPassage =
  Parameters<SearchIndex["replaceFilePassages"]>[1] extends AsyncIterable<infer P> ? P : never;

/** The passages of one file, as the PDF extractor makes them (pages of 40 lines). */
export function filePassages(
  vocab: Vocabulary,
  random: () => number,
  first: number,
  count: number,
  plants: Map<number, string>,
): ExtractedPassage[] {
  const passages: ExtractedPassage[] = [];
  let line = 1;
  let page = 1;
  for (let i = 0; i < count; i++) {
    const content = passageText(vocab, random, 300, plants.get(first + i));
    const lines = content.split("\n").length;
    if (line + lines > 40) {
      page += 1;
      line = 1;
    }
    passages.push({ content, locator: { page, line, line_end: line + lines - 1, source: "text" as const } });
    line += lines;
  }
  return passages;
}

export interface WrittenDataset {
  /** The measured user's files: a result naming any other file is a tenancy leak. */
  userFileIds: Set<string>;
  files: number;
  otherTenantPassages: number;
}

/**
 * Writes the dataset through the real adapters, as the indexer would: ready file records through
 * `createFile`, and passages through `replaceFilePassages`, 50 per file, for the measured user and
 * for a second one. `concurrency` files are written at once (1 for SQLite's single writer). The
 * corpus is the same whatever the concurrency: each file's text is drawn, in order, before its
 * writes start.
 */
export async function writeDataset(
  store: Pick<MetadataStore, "createFile">,
  index: Pick<SearchIndex, "replaceFilePassages">,
  users: { userId: string; otherUserId: string },
  size: number,
  vocab: Vocabulary,
  options: SearchBenchOptions,
  concurrency = 1,
): Promise<WrittenDataset> {
  const userFileIds = new Set<string>();
  let files = 0;
  const otherTenantPassages = Math.round(size * options.otherTenantShare);
  const tenants = [
    {
      userId: users.userId,
      count: size,
      plants: plantings(size, PLANTS_PER_PHRASE),
      seed: 11,
      ids: userFileIds,
    },
    {
      userId: users.otherUserId,
      count: otherTenantPassages,
      plants: plantings(otherTenantPassages, OTHER_TENANT_PLANTS),
      seed: 23,
      ids: null,
    },
  ];
  const inFlight = new Set<Promise<void>>();
  let failure: { error: unknown } | null = null;
  const now = Date.now();
  for (const tenant of tenants) {
    const random = rng(tenant.seed);
    for (let first = 0, n = 0; first < tenant.count; first += PASSAGES_PER_FILE, n++) {
      if (failure) break;
      try {
        assertRunning(); // stop early when the run is interrupted
      } catch (error) {
        failure = { error };
        break;
      }
      const fileId = randomUUID();
      const count = Math.min(PASSAGES_PER_FILE, tenant.count - first);
      // Distinct, increasing creation times, as real uploads have.
      const at = new Date(now - (tenant.count - first) * 1000).toISOString();
      const record = fileRecord(fileId, tenant.userId, n, count, at);
      const passages = filePassages(vocab, random, first, count, tenant.plants);
      tenant.ids?.add(fileId);
      files += 1;
      const write = (async () => {
        await store.createFile(record);
        await index.replaceFilePassages({ userId: tenant.userId, fileId }, asAsync(passages));
      })().catch((error: unknown) => {
        failure ??= { error };
      });
      inFlight.add(write);
      void write.finally(() => inFlight.delete(write));
      if (inFlight.size >= concurrency) await Promise.race(inFlight);
    }
  }
  await Promise.all(inFlight);
  if (failure) throw failure.error;
  return { userFileIds, files, otherTenantPassages };
}

interface Dataset extends WrittenDataset {
  key: string;
  loadSeconds: number;
  indexBytes: number;
}

/**
 * The all-in-one dataset, written before the server starts: the user and its key through the
 * CLI, a second tenant through the store, then writeDataset through SqliteSearchIndex.
 */
async function prepareDataset(
  dataDir: string,
  size: number,
  vocab: Vocabulary,
  options: SearchBenchOptions,
): Promise<Dataset> {
  const { email, key } = await createUserWithKey(dataDir, { plan: "enterprise" });
  const started = performance.now();
  const store = createSqliteMetadataStore(join(dataDir, "metadata.sqlite"));
  let written: WrittenDataset;
  try {
    await store.migrate();
    const user = await store.findUserByEmail(email);
    if (!user) throw new Error(`the CLI did not create ${email}`);
    const other = await store.createUser({ email: `other-tenant-${randomUUID()}@example.com`, plan: "pro" });
    const index = new SqliteSearchIndex(join(dataDir, "index.sqlite"));
    try {
      written = await writeDataset(
        store,
        index,
        { userId: user.id, otherUserId: other.id },
        size,
        vocab,
        options,
      );
    } finally {
      await index.close();
    }
  } finally {
    await store.close();
  }
  const loadSeconds = since(started) / 1000;
  let indexBytes = 0;
  for (const suffix of ["", "-wal"]) {
    try {
      indexBytes += statSync(join(dataDir, `index.sqlite${suffix}`)).size;
    } catch {
      // no WAL left after a clean close
    }
  }
  return { ...written, key, loadSeconds, indexBytes };
}

interface SearchResponse {
  results: { content: string; file_id: string }[];
  count: number;
}

interface Sample {
  cls: QueryClass;
  q: string;
  ms: number;
  requestId: string | null;
  body: SearchResponse;
}

async function timedSearch(baseUrl: string, key: string, query: Query, limit: number): Promise<Sample> {
  const url = `${baseUrl}/api/search?q=${encodeURIComponent(query.q)}&limit=${limit}&mode=quick`;
  const started = performance.now();
  const res = await fetch(url, {
    headers: { Authorization: `Bearer ${key}` },
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const bytes = await res.arrayBuffer();
  const ms = since(started);
  const text = Buffer.from(bytes).toString("utf8");
  if (res.status !== 200)
    throw new Error(`search "${query.q}" answered ${res.status}: ${text.slice(0, 300)}`);
  return {
    cls: query.cls,
    q: query.q,
    ms,
    requestId: res.headers.get("x-request-id"),
    body: JSON.parse(text) as SearchResponse,
  };
}

function classResult(samples: readonly Sample[], server: Map<string, number>): ClassResult {
  const serverMs = samples.flatMap((s) => {
    const ms = s.requestId === null ? undefined : server.get(s.requestId);
    return ms === undefined ? [] : [ms];
  });
  return {
    queries: samples.length,
    latencyMs: roundSummary(summarise(samples.map((s) => s.ms))),
    serverMs: serverMs.length === samples.length ? roundSummary(summarise(serverMs)) : null,
    meanResults:
      Math.round((samples.reduce((n, s) => n + s.body.count, 0) / Math.max(1, samples.length)) * 10) / 10,
  };
}

/** What the measured searches found: latency by class, the slowest, and the correctness checks. */
export type SearchMeasurement = Pick<
  SearchSizeResult,
  "warmupQueries" | "measuredQueries" | "stoppedByTimeBudget" | "overall" | "byClass" | "slowest" | "checks"
>;

/**
 * The warm-up, then the measured sequential searches (the same seeded queries at every size and
 * in both shapes), against `baseUrl` as the user of `key`. Server timings come from the "request"
 * lines in `logs`, of `service` only when given.
 */
export async function measureSearches(
  target: { baseUrl: string; logs: readonly string[] },
  key: string,
  vocab: Vocabulary,
  size: number,
  userFileIds: ReadonlySet<string>,
  options: SearchBenchOptions,
  service?: string,
): Promise<SearchMeasurement> {
  const warmup = makeQueries(vocab, options.warmup, 1000 + size);
  for (const query of warmup) await timedSearch(target.baseUrl, key, query, options.limit);

  const queries = makeQueries(vocab, options.queries, 7);
  const samples: Sample[] = [];
  const deadline = performance.now() + options.queryBudgetMs;
  let stoppedByTimeBudget = false;
  for (const query of queries) {
    if (performance.now() > deadline) {
      stoppedByTimeBudget = true;
      break;
    }
    samples.push(await timedSearch(target.baseUrl, key, query, options.limit));
  }
  await sleep(300); // let the last request lines reach the log
  const server = serverTimings(target.logs, service);

  const byClass: Partial<Record<QueryClass, ClassResult>> = {};
  for (const cls of QUERY_CLASSES) {
    const of = samples.filter((s) => s.cls === cls);
    if (of.length > 0) byClass[cls] = classResult(of, server);
  }
  let tenancyLeaks = 0;
  for (const s of samples) tenancyLeaks += s.body.results.filter((r) => !userFileIds.has(r.file_id)).length;
  const phrase = samples.filter((s) => s.cls === "phrase");
  const phraseExact = phrase.filter(
    (s) =>
      s.body.count === PLANTS_PER_PHRASE && s.body.results[0]?.content.replace(/\s+/g, " ").includes(s.q),
  ).length;
  const absent = samples.filter((s) => s.cls === "absent");
  const absentEmpty = absent.filter((s) => s.body.count === 0).length;
  return {
    warmupQueries: warmup.length,
    measuredQueries: samples.length,
    stoppedByTimeBudget,
    overall: classResult(samples, server),
    byClass,
    slowest: [...samples]
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 5)
      .map((x) => ({ cls: x.cls, q: x.q, ms: round(x.ms), results: x.body.count })),
    checks: {
      tenancyLeaks,
      phraseQueriesExact: `${phraseExact}/${phrase.length}`,
      absentQueriesEmpty: `${absentEmpty}/${absent.length}`,
    },
  };
}

export async function benchSearchSize(
  size: number,
  options: SearchBenchOptions,
  log: (line: string) => void,
): Promise<SearchSizeResult> {
  const vocab = buildVocabulary(options.vocabularySize);
  return withTempDir("locus-bench-search-", async (dataDir) => {
    log(
      `search ${size}: writing ${size} passages (+${Math.round(size * options.otherTenantShare)} of another user) ...`,
    );
    // Tracked: an interruption lets it stop (at the next file) before the directory is removed.
    const data = await track(prepareDataset(dataDir, size, vocab, options));
    const loaded = size + data.otherTenantPassages;
    log(
      `search ${size}: loaded in ${data.loadSeconds.toFixed(1)} s (${Math.round(loaded / data.loadSeconds)} passages/s); starting the server`,
    );
    return withServer(dataDir, { LOCUS_RATE_LIMIT_ENTERPRISE: "100000" }, async (server) => {
      const measured = await measureSearches(server, data.key, vocab, size, data.userFileIds, options);
      const result: SearchSizeResult = {
        passages: size,
        files: data.files,
        otherTenantPassages: data.otherTenantPassages,
        vocabularySize: options.vocabularySize,
        loadSeconds: Math.round(data.loadSeconds * 10) / 10,
        loadPassagesPerSecond: Math.round(loaded / data.loadSeconds),
        indexBytes: data.indexBytes,
        ...measured,
      };
      log(
        `search ${size}: ${result.measuredQueries} queries, p50 ${result.overall.latencyMs.p50} ms, p95 ${result.overall.latencyMs.p95} ms`,
      );
      return result;
    });
  });
}
