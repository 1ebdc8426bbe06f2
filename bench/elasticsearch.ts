/**
 * `pnpm bench --only elasticsearch`: sizing figures for an Elasticsearch cluster. Loads N passages
 * for M tenants (Zipf-sized: a few large, many small) through the real ElasticsearchSearchIndex,
 * in files of 50 passages, C files at a time, so the figures include Locus's bulk batching, routing
 * by user and wait-for-refresh per file; then times sequential quick searches through the adapter
 * for a small, a medium and the largest tenant; reads the index's size and document count from the
 * cluster; and writes bench/report/elasticsearch-<date>.md and .json with sizing notes derived
 * from what it measured.
 *
 * It only ever touches its own index: a random prefix `locus-bench-<hex>` (the adapter's alias and
 * its `<prefix>-v<N>` index), deleted by name at the end, on errors, on Ctrl-C and at the global
 * time limit. `--dry-run` runs the same flow on an in-process fake cluster (elasticsearch-fake.ts).
 */
import { randomBytes, randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { assertRunning, defer, track } from "./cleanup.ts";
import { buildVocabulary, rng, type Vocabulary } from "./corpus.ts";
import {
  ElasticsearchSearchIndex,
  EsClient,
  type ElasticsearchSearchIndexOptions,
  type EsClientOptions,
} from "./deps.ts";
import { fakeCluster, fakeConnection } from "./elasticsearch-fake.ts";
import { fmt, machine, REPORT_DIR, table, type Machine } from "./report.ts";
import {
  asAsync,
  DEFAULT_SEARCH_OPTIONS,
  filePassages,
  makeQueries,
  plantings,
  PLANTS_PER_PHRASE,
  QUERY_CLASS_DESCRIPTIONS,
  QUERY_CLASSES,
  type QueryClass,
} from "./search-latency.ts";
import { round, roundSummary, summarise, type Summary } from "./stats.ts";

export interface EsBenchOptions {
  /** Cluster URL (or null with cloudId, or in a dry run). */
  url: string | null;
  cloudId: string | null;
  dryRun: boolean;
  passages: number;
  tenants: number;
  /** Measured searches per measured tenant (small, medium, largest). */
  queries: number;
  /** Files written at once: like that many indexer processes (each indexes one file at a time). */
  concurrency: number;
  /** Primary shards and replicas of the benchmark's index; null: the cluster's defaults. */
  shards: number | null;
  replicas: number | null;
}

export const DEFAULT_ES_OPTIONS = { passages: 1_000_000, tenants: 100, queries: 500, concurrency: 4 };

const PASSAGES_PER_FILE = 50;
/** Tenant k (1-based) holds a share proportional to 1/k^s of the passages. */
const TENANT_ZIPF_EXPONENT = 1;
const LIMIT = DEFAULT_SEARCH_OPTIONS.limit;
const VOCABULARY_SIZE = DEFAULT_SEARCH_OPTIONS.vocabularySize;
/** Unmeasured searches per measured tenant before the measured ones. */
const WARMUP_PER_TENANT = 50;
/** Attempts for one file when the cluster answers "unavailable" (503, timeouts), as bus redelivery would. */
const FILE_ATTEMPTS = 3;
/** The adapter's default bulk request size (passages), for the report. */
const ADAPTER_BULK_BATCH = 500;
const DRY_RUN_NODE = "http://dry-run.invalid:9200";

type TenantLabel = "small" | "medium" | "largest";

interface ClassFigures {
  queries: number;
  latencyMs: Summary;
  meanResults: number;
}

export interface TenantSearchResult {
  label: TenantLabel;
  /** Zipf rank (1 = largest). */
  rank: number;
  passages: number;
  files: number;
  warmupQueries: number;
  overall: ClassFigures;
  byClass: Partial<Record<QueryClass, ClassFigures>>;
  slowest: { cls: QueryClass; q: string; ms: number; results: number }[];
  checks: {
    /** Results naming a file of another tenant: must be 0. */
    tenancyLeaks: number;
    /** Phrase queries that found exactly the tenant's planted passages, one containing the phrase first. */
    phraseQueriesExact: string;
    absentQueriesEmpty: string;
  };
}

export interface EsReport {
  dryRun: boolean;
  date: string;
  durationSeconds: number;
  /** The machine the benchmark (the client) ran on. */
  machine: Machine;
  options: EsBenchOptions & {
    passagesPerFile: number;
    tenantZipfExponent: number;
    warmupQueriesPerTenant: number;
    limit: number;
    vocabularySize: number;
    adapterBulkBatch: number;
  };
  cluster: {
    /** URL without credentials, or "cloud id", or the dry-run placeholder. */
    endpoint: string;
    name: string;
    version: string;
    buildFlavor: string;
    luceneVersion: string;
    health: string;
    nodes: number;
    dataNodes: number;
    /** From `_cat/nodes`, when the credentials allow it. */
    nodeList: { name: string; roles: string; heapMax: string; ramMax: string; cpu: string }[] | null;
  };
  index: {
    /** Alias and physical indexes (all deleted afterwards). */
    alias: string;
    names: string[];
    primaryShards: number | null;
    replicas: number | null;
    refreshInterval: string;
    /** Nodes holding a started copy (primary or replica) of one of its shards. */
    nodesHoldingShards: number;
    docs: number;
    docsMatchPassages: boolean;
    primaryBytes: number;
    totalBytes: number;
    primaryBytesPerPassage: number;
    totalBytesPerPassage: number;
  } | null;
  dataset: {
    tenants: number;
    passages: number;
    files: number;
    /** Passages of the largest, median and smallest tenant. */
    tenantPassages: { largest: number; median: number; smallest: number };
    /** Mean UTF-8 bytes of a passage's text. */
    sourceBytesPerPassage: number;
  };
  load: {
    seconds: number;
    passagesPerSecond: number;
    filesPerSecond: number;
    /** One `replaceFilePassages` call: a delete-by-query and one bulk of ~50 passages waiting for a refresh. */
    perFileMs: Summary;
    /** Files that needed another attempt after a 503 or timeout. */
    retriedFiles: number;
    /** Time spent generating text (in the same process, between writes). */
    generationSeconds: number;
    /** CPU the benchmark process used during the load, in cores: near 1, the client was the limit. */
    clientCpuCores: number;
  } | null;
  search: { tenants: TenantSearchResult[]; overall: ClassFigures | null };
  sizing: string[];
  cleanup: { deleted: string[]; leftover: string[]; error: string | null };
  errors: string[];
  /** Dry run only: the requests the fake cluster answered, by shape, to check what the adapter sends. */
  dryRunRequests: Record<string, number> | null;
}

// ---------------------------------------------------------------------------------------------
// Tenants and files

/** Passages per tenant, largest first: Zipf shares of `total`, at least 1 each, summing to `total`. */
export function tenantSizes(total: number, tenants: number, exponent = TENANT_ZIPF_EXPONENT): number[] {
  if (tenants < 1 || total < tenants)
    throw new Error(`need at least one passage per tenant (${total} < ${tenants})`);
  const weights = Array.from({ length: tenants }, (_, k) => 1 / (k + 1) ** exponent);
  const sum = weights.reduce((s, w) => s + w, 0);
  const raw = weights.map((w) => (total * w) / sum);
  const sizes = raw.map((r) => Math.max(1, Math.floor(r)));
  let diff = total - sizes.reduce((s, n) => s + n, 0);
  // Largest remainders first for what is missing; the largest tenants give back any excess.
  const byRemainder = raw.map((r, i) => [r - Math.floor(r), i] as const).sort((a, b) => b[0] - a[0]);
  for (let j = 0; diff > 0; j = (j + 1) % tenants, diff--) sizes[byRemainder[j]![1]]! += 1;
  for (let i = 0; diff < 0; i = (i + 1) % tenants) {
    if (sizes[i]! > 1) {
      sizes[i]! -= 1;
      diff++;
    }
  }
  // Rounding can put a small tenant above a larger one: rank by size again.
  return sizes.sort((a, b) => b - a);
}

/** Small (the smallest), medium (nearest the geometric mean of the extremes) and the largest tenant. */
export function measuredTenants(sizes: readonly number[]): { label: TenantLabel; rank: number }[] {
  const last = sizes.length - 1;
  const target = Math.sqrt(sizes[0]! * sizes[last]!);
  let medium = 0;
  for (let i = 0; i <= last; i++)
    if (Math.abs(Math.log(sizes[i]! / target)) < Math.abs(Math.log(sizes[medium]! / target))) medium = i;
  const picked = [
    { label: "small" as const, rank: last + 1 },
    { label: "medium" as const, rank: medium + 1 },
    { label: "largest" as const, rank: 1 },
  ];
  // Few or equal tenants: one tenant is measured once, under the last (largest) label that names it.
  return picked.filter((p, i) => !picked.slice(i + 1).some((q) => q.rank === p.rank));
}

/**
 * The order files are written in: every tenant's files, in order within the tenant, interleaved
 * across tenants at random (seeded), as many tenants' uploads would arrive.
 */
function fileSchedule(sizes: readonly number[], seed: number): { tenant: number; file: number }[] {
  const slots: number[] = [];
  sizes.forEach((n, t) => {
    for (let f = 0; f < Math.ceil(n / PASSAGES_PER_FILE); f++) slots.push(t);
  });
  const random = rng(seed);
  for (let i = slots.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [slots[i], slots[j]] = [slots[j]!, slots[i]!];
  }
  const next = sizes.map(() => 0);
  return slots.map((tenant) => ({ tenant, file: next[tenant]!++ }));
}

/** A file's text depends on its tenant and position only, whatever order files are written in. */
const fileSeed = (tenant: number, file: number) =>
  (Math.imul(tenant + 1, 1_000_003) + Math.imul(file, 7919) + 17) >>> 0;

// ---------------------------------------------------------------------------------------------
// Connection and cluster

function env(name: string): string | undefined {
  const v = process.env[name];
  return v === undefined || v === "" ? undefined : v;
}

/** Connection settings as the server reads them (ELASTICSEARCH_* variables), for a real cluster. */
function connectionSettings(options: EsBenchOptions): Omit<ElasticsearchSearchIndexOptions, "indexPrefix"> {
  const caPath = env("ELASTICSEARCH_CA_CERT");
  const timeout = env("ELASTICSEARCH_REQUEST_TIMEOUT_MS");
  const retries = env("ELASTICSEARCH_MAX_RETRIES");
  return {
    ...(options.url ? { node: options.url } : { cloudId: options.cloudId! }),
    apiKey: env("ELASTICSEARCH_API_KEY"),
    username: env("ELASTICSEARCH_USERNAME"),
    password: env("ELASTICSEARCH_PASSWORD"),
    ...(caPath ? { caCertificate: readFileSync(caPath, "utf8") } : {}),
    ...(timeout ? { requestTimeoutMs: Number(timeout) } : {}),
    ...(retries ? { maxRetries: Number(retries) } : {}),
  };
}

/** The benchmark's own client (cluster info, stats, cleanup): same endpoint and credentials. */
function adminClientOptions(settings: ReturnType<typeof connectionSettings>): EsClientOptions {
  const auth: EsClientOptions["auth"] = settings.apiKey
    ? { apiKey: settings.apiKey }
    : settings.username !== undefined
      ? { username: settings.username, password: settings.password ?? "" }
      : undefined;
  return {
    ...(settings.cloudId ? { cloud: { id: settings.cloudId } } : { node: settings.node }),
    ...(auth ? { auth } : {}),
    ...(settings.caCertificate ? { tls: { ca: settings.caCertificate } } : {}),
    requestTimeout: 60_000,
    maxRetries: 3,
  };
}

function endpointLabel(options: EsBenchOptions): string {
  if (options.dryRun) return "in-process fake cluster (dry run)";
  if (!options.url) return "Elastic Cloud (cloud id)";
  const u = new URL(options.url);
  u.username = "";
  u.password = "";
  return u.toString().replace(/\/$/, "");
}

/** Indexes that belong to this run: the alias's own name or `<prefix>-...`, nothing else. */
async function ownIndexes(admin: EsClient, prefix: string): Promise<string[]> {
  const found = await admin.indices.get({
    index: [prefix, `${prefix}-*`],
    ignore_unavailable: true,
    allow_no_indices: true,
    expand_wildcards: "all",
  });
  return Object.keys(found)
    .filter((name) => name === prefix || name.startsWith(`${prefix}-`))
    .sort();
}

async function clusterFacts(admin: EsClient, options: EsBenchOptions): Promise<EsReport["cluster"]> {
  const info = await admin.info();
  const health = await admin.cluster.health();
  let nodeList: EsReport["cluster"]["nodeList"] = null;
  try {
    const rows = (await admin.cat.nodes({
      format: "json",
      h: ["name", "node.role", "heap.max", "ram.max", "cpu"],
    })) as Record<string, string | undefined>[];
    nodeList = rows.map((r) => ({
      name: r.name ?? "?",
      roles: r["node.role"] ?? "?",
      heapMax: r["heap.max"] ?? "?",
      ramMax: r["ram.max"] ?? "?",
      cpu: r.cpu ?? "?",
    }));
  } catch {
    // Not allowed for these credentials (or a serverless project): the counts below still hold.
  }
  return {
    endpoint: endpointLabel(options),
    name: info.cluster_name,
    version: info.version.number,
    buildFlavor: info.version.build_flavor,
    luceneVersion: info.version.lucene_version,
    health: health.status,
    nodes: health.number_of_nodes,
    dataNodes: health.number_of_data_nodes,
    nodeList,
  };
}

async function indexFacts(
  admin: EsClient,
  alias: string,
  names: string[],
  passages: number,
): Promise<NonNullable<EsReport["index"]>> {
  const settings = await admin.indices.getSettings({ index: alias });
  const first = Object.values(settings)[0]?.settings?.index;
  const int = (v: unknown) => (v === undefined || v === null ? null : Number(v));
  let nodesHoldingShards = 0;
  try {
    const shards = (await admin.cat.shards({
      index: alias,
      format: "json",
      h: ["index", "shard", "prirep", "state", "node"],
    })) as Record<string, string | undefined>[];
    nodesHoldingShards = new Set(shards.filter((s) => s.state === "STARTED" && s.node).map((s) => s.node))
      .size;
  } catch {
    // Not allowed for these credentials: per-node figures use the data node count instead.
  }
  const stats = await admin.indices.stats({ index: alias, metric: ["docs", "store"] });
  const docs = stats._all.primaries?.docs?.count ?? 0;
  const primaryBytes = Number(stats._all.primaries?.store?.size_in_bytes ?? 0);
  const totalBytes = Number(stats._all.total?.store?.size_in_bytes ?? 0);
  return {
    alias,
    names,
    primaryShards: int(first?.number_of_shards),
    replicas: int(first?.number_of_replicas),
    refreshInterval:
      first?.refresh_interval === undefined ? "1s (default)" : JSON.stringify(first.refresh_interval),
    nodesHoldingShards,
    docs,
    docsMatchPassages: docs === passages,
    primaryBytes,
    totalBytes,
    primaryBytesPerPassage: docs > 0 ? Math.round(primaryBytes / docs) : 0,
    totalBytesPerPassage: docs > 0 ? Math.round(totalBytes / docs) : 0,
  };
}

/**
 * One line for an error: the client's errors carry the whole request and response, too much for a
 * console; a ResponseError's reason is in its body; a LocusError's cause says what the cluster did.
 */
export function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const body = (err as { body?: { error?: { type?: string; reason?: string } } }).body;
  const status = (err as { statusCode?: number }).statusCode;
  let line = `${err.name}: ${err.message}`;
  if (body?.error?.reason)
    line = `${err.name} (${status ?? "?"} ${body.error.type ?? ""}): ${body.error.reason}`;
  if (err.cause !== undefined) line += ` (cause: ${describeError(err.cause)})`;
  return line.split("\n")[0]!;
}

const isUnavailable = (err: unknown) =>
  typeof err === "object" && err !== null && (err as { code?: unknown }).code === "unavailable";
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const seconds = (ms: number) =>
  ms < 90_000
    ? `${Math.round(ms / 1000)} s`
    : ms < 5_400_000
      ? `${round(ms / 60_000)} min`
      : `${round(ms / 3_600_000)} h`;

// ---------------------------------------------------------------------------------------------
// The run

interface Tenant {
  rank: number;
  userId: string;
  passages: number;
  plants: Map<number, string>;
  /** Only for measured tenants: a result naming any other file is a tenancy leak. */
  fileIds: Set<string> | null;
}

/**
 * Runs the benchmark and returns the report (also when a step failed after the load, with
 * `errors`); throws when it could not get as far as loading. The index is deleted either way.
 */
export async function benchElasticsearch(
  options: EsBenchOptions,
  log: (line: string) => void,
  loadAtStart: number,
): Promise<EsReport> {
  const started = performance.now();
  const vocab = buildVocabulary(VOCABULARY_SIZE);
  const prefix = `locus-bench-${options.dryRun ? "dry-run-" : ""}${randomBytes(6).toString("hex")}`;

  let admin: EsClient;
  let index: ElasticsearchSearchIndex;
  let requests: Map<string, number> | null = null;
  const indexOptions = {
    indexPrefix: prefix,
    ...(options.shards !== null ? { shards: options.shards } : {}),
    ...(options.replicas !== null ? { replicas: options.replicas } : {}),
  };
  if (options.dryRun) {
    const cluster = fakeCluster();
    requests = cluster.requests;
    const Connection = fakeConnection(cluster);
    admin = new EsClient({ node: DRY_RUN_NODE, Connection });
    index = new ElasticsearchSearchIndex({
      ...indexOptions,
      client: new EsClient({ node: DRY_RUN_NODE, Connection }),
    });
  } else {
    const settings = connectionSettings(options);
    admin = new EsClient(adminClientOptions(settings));
    index = new ElasticsearchSearchIndex({ ...settings, ...indexOptions });
  }

  const report: EsReport = {
    dryRun: options.dryRun,
    date: new Date().toISOString(),
    durationSeconds: 0,
    machine: machine(loadAtStart),
    options: {
      ...options,
      url: options.url === null ? null : endpointLabel(options),
      cloudId: options.cloudId === null ? null : "(set)",
      passagesPerFile: PASSAGES_PER_FILE,
      tenantZipfExponent: TENANT_ZIPF_EXPONENT,
      warmupQueriesPerTenant: Math.min(WARMUP_PER_TENANT, options.queries),
      limit: LIMIT,
      vocabularySize: VOCABULARY_SIZE,
      adapterBulkBatch: ADAPTER_BULK_BATCH,
    },
    cluster: {
      endpoint: endpointLabel(options),
      name: "?",
      version: "?",
      buildFlavor: "?",
      luceneVersion: "?",
      health: "?",
      nodes: 0,
      dataNodes: 0,
      nodeList: null,
    },
    index: null,
    dataset: {
      tenants: options.tenants,
      passages: options.passages,
      files: 0,
      tenantPassages: { largest: 0, median: 0, smallest: 0 },
      sourceBytesPerPassage: 0,
    },
    load: null,
    search: { tenants: [], overall: null },
    sizing: [],
    cleanup: { deleted: [], leftover: [], error: null },
    errors: [],
    dryRunRequests: null,
  };

  /** Set just before the first write (which creates the index): before it there is nothing to delete. */
  let writing = false;
  // Registered before anything is created: whatever happens next, the run's indexes go.
  const cleanup = defer(async () => {
    // Closed first, so nothing in flight can re-create the index after it is deleted.
    await index.close().catch(() => undefined);
    if (!writing) {
      await admin.close().catch(() => undefined);
      return;
    }
    try {
      const names = await ownIndexes(admin, prefix);
      if (names.length > 0) await admin.indices.delete({ index: names });
      report.cleanup.deleted = names;
      report.cleanup.leftover = await ownIndexes(admin, prefix);
      log(
        `elasticsearch: deleted ${names.length > 0 ? names.join(", ") : "nothing (no index was created)"}` +
          (report.cleanup.leftover.length > 0 ? `; STILL THERE: ${report.cleanup.leftover.join(", ")}` : ""),
      );
    } catch (err) {
      report.cleanup.error = describeError(err);
      console.error(
        `elasticsearch: could not delete ${prefix}* (delete it by hand): ${report.cleanup.error}`,
      );
    } finally {
      await admin.close().catch(() => undefined);
    }
  });

  try {
    assertRunning();
    report.cluster = await clusterFacts(admin, options);
    log(
      `elasticsearch: ${report.cluster.endpoint}: ${report.cluster.name}, version ${report.cluster.version}, ` +
        `${report.cluster.nodes} nodes (${report.cluster.dataNodes} data), ${report.cluster.health}; index prefix ${prefix}`,
    );
    const existing = await ownIndexes(admin, prefix);
    if (existing.length > 0) throw new Error(`refusing to run: ${existing.join(", ")} already exist`);

    // Tenants and their files.
    const sizes = tenantSizes(options.passages, options.tenants);
    const measured = measuredTenants(sizes);
    const tenants: Tenant[] = sizes.map((passages, i) => ({
      rank: i + 1,
      userId: randomUUID(),
      passages,
      plants: passages >= PLANTS_PER_PHRASE * 4 ? plantings(passages, PLANTS_PER_PHRASE) : new Map(),
      fileIds: measured.some((m) => m.rank === i + 1) ? new Set() : null,
    }));
    const schedule = fileSchedule(sizes, 4242);
    report.dataset.files = schedule.length;
    report.dataset.tenantPassages = {
      largest: sizes[0]!,
      median: sizes[Math.floor((sizes.length - 1) / 2)]!,
      smallest: sizes.at(-1)!,
    };
    log(
      `elasticsearch: loading ${options.passages.toLocaleString("en")} passages for ${options.tenants} tenants ` +
        `(largest ${sizes[0]!.toLocaleString("en")}, smallest ${sizes.at(-1)!.toLocaleString("en")}) in ` +
        `${schedule.length.toLocaleString("en")} files, ${options.concurrency} at a time`,
    );

    // Load.
    writing = true;
    const fileMs: number[] = [];
    let generationMs = 0;
    let sourceBytes = 0;
    let loaded = 0;
    let retriedFiles = 0;
    const cpuStart = process.cpuUsage();
    const loadStart = performance.now();
    let lastLog = loadStart;
    const writeFile = async (tenant: Tenant, fileId: string, passages: ReturnType<typeof filePassages>) => {
      const t0 = performance.now();
      for (let attempt = 1; ; attempt++) {
        try {
          await index.replaceFilePassages({ userId: tenant.userId, fileId }, asAsync(passages));
          break;
        } catch (err) {
          if (!isUnavailable(err) || attempt >= FILE_ATTEMPTS) throw err;
          if (attempt === 1) retriedFiles += 1;
          await sleep(1000 * attempt);
          assertRunning();
        }
      }
      fileMs.push(performance.now() - t0);
      loaded += passages.length;
      const now = performance.now();
      if (now - lastLog > 30_000) {
        lastLog = now;
        const rate = loaded / ((now - loadStart) / 1000);
        log(
          `elasticsearch: ${loaded.toLocaleString("en")}/${options.passages.toLocaleString("en")} passages, ` +
            `${Math.round(rate)}/s, about ${seconds(((options.passages - loaded) / rate) * 1000)} to go`,
        );
      }
    };
    await track(
      (async () => {
        const inFlight = new Set<Promise<void>>();
        let failure: { error: unknown } | null = null;
        for (const { tenant: t, file } of schedule) {
          if (failure) break;
          try {
            assertRunning(); // stop at the next file when the run is interrupted
          } catch (error) {
            failure = { error };
            break;
          }
          const tenant = tenants[t]!;
          const first = file * PASSAGES_PER_FILE;
          const count = Math.min(PASSAGES_PER_FILE, tenant.passages - first);
          const g0 = performance.now();
          const passages = filePassages(vocab, rng(fileSeed(t, file)), first, count, tenant.plants);
          for (const p of passages) sourceBytes += Buffer.byteLength(p.content);
          generationMs += performance.now() - g0;
          const fileId = randomUUID();
          tenant.fileIds?.add(fileId);
          const write = writeFile(tenant, fileId, passages).catch((error: unknown) => {
            failure ??= { error };
          });
          inFlight.add(write);
          void write.finally(() => inFlight.delete(write));
          if (inFlight.size >= options.concurrency) await Promise.race(inFlight);
        }
        await Promise.all(inFlight);
        if (failure) throw failure.error;
      })(),
    );
    const loadMs = performance.now() - loadStart;
    const cpu = process.cpuUsage(cpuStart);
    report.dataset.sourceBytesPerPassage = Math.round(sourceBytes / options.passages);
    report.load = {
      seconds: round(loadMs / 1000),
      passagesPerSecond: Math.round(options.passages / (loadMs / 1000)),
      filesPerSecond: round(schedule.length / (loadMs / 1000)),
      perFileMs: roundSummary(summarise(fileMs)),
      retriedFiles,
      generationSeconds: round(generationMs / 1000),
      clientCpuCores: round((cpu.user + cpu.system) / 1000 / loadMs),
    };
    log(
      `elasticsearch: loaded in ${seconds(loadMs)}: ${report.load.passagesPerSecond} passages/s, ` +
        `per file p50 ${report.load.perFileMs.p50} ms, p95 ${report.load.perFileMs.p95} ms`,
    );

    // Search, then the index's own figures (read last: merges have had the search phase to run).
    try {
      for (const m of measured) {
        const tenant = tenants[m.rank - 1]!;
        report.search.tenants.push(await measureTenant(index, vocab, tenant, m.label, options.queries, log));
      }
      const all = report.search.tenants;
      if (all.length > 0) report.search.overall = mergeOverall(all);
    } catch (err) {
      report.errors.push(`search: ${describeError(err)}`);
      console.error(`elasticsearch: search phase failed: ${describeError(err)}`);
    }
    try {
      assertRunning();
      report.index = await indexFacts(admin, prefix, await ownIndexes(admin, prefix), options.passages);
    } catch (err) {
      report.errors.push(`index stats: ${describeError(err)}`);
      console.error(`elasticsearch: reading index stats failed: ${describeError(err)}`);
    }
  } finally {
    await cleanup();
  }
  if (requests)
    report.dryRunRequests = Object.fromEntries([...requests].sort((a, b) => a[0].localeCompare(b[0])));
  report.sizing = sizingNotes(report);
  report.durationSeconds = Math.round((performance.now() - started) / 1000);
  return report;
}

interface Sample {
  cls: QueryClass;
  q: string;
  ms: number;
  results: number;
}

const figures = (samples: readonly Sample[]): ClassFigures => ({
  queries: samples.length,
  latencyMs: roundSummary(summarise(samples.map((s) => s.ms))),
  meanResults: round(samples.reduce((n, s) => n + s.results, 0) / Math.max(1, samples.length)),
});

/** Samples kept per tenant, for the overall figure. */
const samplesOf = new WeakMap<TenantSearchResult, Sample[]>();

function mergeOverall(results: readonly TenantSearchResult[]): ClassFigures {
  return figures(results.flatMap((r) => samplesOf.get(r) ?? []));
}

async function measureTenant(
  index: ElasticsearchSearchIndex,
  vocab: Vocabulary,
  tenant: Tenant,
  label: TenantLabel,
  count: number,
  log: (line: string) => void,
): Promise<TenantSearchResult> {
  const warmup = makeQueries(vocab, Math.min(WARMUP_PER_TENANT, count), 1000 + tenant.rank);
  for (const query of warmup) {
    assertRunning();
    await index.search({ userId: tenant.userId, text: query.q, limit: LIMIT });
  }
  // The same queries for every tenant, so sizes compare like with like.
  const queries = makeQueries(vocab, count, 7);
  const samples: Sample[] = [];
  let tenancyLeaks = 0;
  let phraseExact = 0;
  const expectedPhraseHits = tenant.plants.size > 0 ? PLANTS_PER_PHRASE : 0;
  for (const query of queries) {
    assertRunning();
    const t0 = performance.now();
    const hits = await index.search({ userId: tenant.userId, text: query.q, limit: LIMIT });
    const ms = performance.now() - t0;
    samples.push({ cls: query.cls, q: query.q, ms, results: hits.length });
    tenancyLeaks += hits.filter((h) => !tenant.fileIds!.has(h.fileId)).length;
    if (
      query.cls === "phrase" &&
      hits.length === expectedPhraseHits &&
      (expectedPhraseHits === 0 || hits[0]!.content.replace(/\s+/g, " ").includes(query.q))
    )
      phraseExact += 1;
  }
  const byClass: Partial<Record<QueryClass, ClassFigures>> = {};
  for (const cls of QUERY_CLASSES) {
    const of = samples.filter((s) => s.cls === cls);
    if (of.length > 0) byClass[cls] = figures(of);
  }
  const phrase = samples.filter((s) => s.cls === "phrase").length;
  const absent = samples.filter((s) => s.cls === "absent");
  const result: TenantSearchResult = {
    label,
    rank: tenant.rank,
    passages: tenant.passages,
    files: tenant.fileIds!.size,
    warmupQueries: warmup.length,
    overall: figures(samples),
    byClass,
    slowest: [...samples]
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 5)
      .map((s) => ({ cls: s.cls, q: s.q, ms: round(s.ms), results: s.results })),
    checks: {
      tenancyLeaks,
      phraseQueriesExact: `${phraseExact}/${phrase}`,
      absentQueriesEmpty: `${absent.filter((s) => s.results === 0).length}/${absent.length}`,
    },
  };
  samplesOf.set(result, samples);
  const l = result.overall.latencyMs;
  log(
    `elasticsearch: ${label} tenant (${tenant.passages.toLocaleString("en")} passages): ${samples.length} searches, ` +
      `p50 ${l.p50} ms, p95 ${l.p95} ms, p99 ${l.p99} ms`,
  );
  return result;
}

// ---------------------------------------------------------------------------------------------
// Sizing notes and the report

const gb = (bytes: number) => round(bytes / 1e9);
const size = (bytes: number) => (bytes >= 1e9 ? `${gb(bytes)} GB` : `${round(bytes / 1e6)} MB`);

const CLASS_DESCRIPTIONS: Record<QueryClass, string> = {
  ...QUERY_CLASS_DESCRIPTIONS,
  phrase: `a planted 3-word phrase (in ${PLANTS_PER_PHRASE} passages of every tenant of at least ${PLANTS_PER_PHRASE * 4}, so in other tenants' too)`,
};

/** "How to read this for sizing", from the measured figures only. */
export function sizingNotes(r: EsReport): string[] {
  const notes: string[] = [];
  if (r.dryRun)
    notes.push(
      "DRY RUN: these figures come from an in-process fake cluster; they check the benchmark, and say nothing about Elasticsearch.",
    );
  const ix = r.index;
  const replicas = ix?.replicas ?? 1;
  if (ix && ix.docs > 0) {
    const perMillion = (ix.primaryBytesPerPassage * 1e6 * (1 + replicas)) / 1e9;
    notes.push(
      `Disk: ${ix.primaryBytesPerPassage} bytes per passage on disk for the primaries ` +
        `(${round(ix.primaryBytesPerPassage / Math.max(1, r.dataset.sourceBytesPerPassage))}× the ${r.dataset.sourceBytesPerPassage} bytes of its text), ` +
        `read right after loading, before merges settle. With ${replicas} replica(s) plan about ${round(perMillion)} GB per million passages, ` +
        `${round(perMillion * 10)} GB per 10 million; keep data nodes below the 85% disk watermark (so about ${round(perMillion / 0.85)} GB of disk per million passages) ` +
        `and leave room for merges and for \`pnpm locus index rebuild\`, which holds a second copy of the index while it runs.` +
        (ix.docsMatchPassages
          ? ""
          : ` (The index held ${ix.docs} documents for ${r.dataset.passages} passages: check the run.)`),
    );
  }
  const load = r.load;
  if (load) {
    const holders = ix && ix.nodesHoldingShards > 0 ? ix.nodesHoldingShards : r.cluster.dataNodes;
    const perNode = holders > 0 ? Math.round(load.passagesPerSecond / holders) : null;
    const timeFor = (n: number) => seconds((n / load.passagesPerSecond) * 1000);
    notes.push(
      `Indexing: ${load.passagesPerSecond} passages/s with ${r.options.concurrency} files of ${PASSAGES_PER_FILE} passages in flight` +
        (perNode !== null
          ? ` (${perNode} passages/s per data node, over the ${holders} node(s) holding the index's ${ix?.primaryShards ?? "?"} primary shard(s) and their replicas)`
          : "") +
        `. Each file took p50 ${load.perFileMs.p50} ms, p95 ${load.perFileMs.p95} ms: a delete-by-query and one bulk request that waits for a refresh (refresh interval ${ix?.refreshInterval ?? "?"}), ` +
        `so the rate is about files in flight × ${PASSAGES_PER_FILE} / time per file. Locus's indexer writes one file at a time per process: ` +
        `the rate grows with the number of indexer processes until the time per file starts to grow — rerun with a larger --concurrency to find that point. ` +
        `At this rate 1 million passages load in ${timeFor(1e6)}, 10 million in ${timeFor(1e7)}.` +
        (load.retriedFiles > 0
          ? ` ${load.retriedFiles} file(s) were retried after 503s or timeouts: the cluster was at its limit.`
          : "") +
        (load.clientCpuCores > 0.8
          ? ` The benchmark process used ${load.clientCpuCores} cores while loading: the client may have been the limit; run it on a larger machine or nearer the cluster.`
          : ""),
    );
  }
  const searched = r.search.tenants;
  if (searched.length > 0) {
    notes.push(
      `Search: sequential quick searches (limit ${LIMIT}, one client) had p95 ` +
        searched
          .map(
            (t) =>
              `${t.overall.latencyMs.p95} ms for a tenant of ${t.passages.toLocaleString("en")} passages`,
          )
          .join(", ") +
        (r.search.overall ? ` (p95 ${r.search.overall.latencyMs.p95} ms overall)` : "") +
        `. Every search is routed to the one shard holding its tenant and filtered to that tenant, so latency follows the tenant's size and that shard's, ` +
        `not the cluster's total: size for the largest tenant you expect, and add nodes (with more primary shards) to spread tenants, not to speed up one. ` +
        `These are single-client latencies; throughput under concurrent searches is not measured here.`,
    );
  }
  if (r.cluster.dataNodes > 0 && load)
    notes.push(
      `Measured on ${r.cluster.nodes} node(s), ${r.cluster.dataNodes} data node(s), Elasticsearch ${r.cluster.version}, index with ` +
        `${ix?.primaryShards ?? "?"} primary shard(s) and ${ix?.replicas ?? "?"} replica(s), ${r.dataset.passages.toLocaleString("en")} passages; ` +
        `figures at other sizes are extrapolations: rerun at the size you plan for.`,
    );
  return notes;
}

export function renderEsMarkdown(r: EsReport): string {
  const out: string[] = [];
  const m = r.machine;
  out.push(`# Locus Elasticsearch benchmark${r.dryRun ? " — DRY RUN" : ""}`, "");
  if (r.dryRun)
    out.push(
      "> **Dry run**: run against an in-process fake cluster to check the benchmark itself. " +
        "None of the figures below say anything about Elasticsearch.",
      "",
    );
  out.push(`- Date: ${r.date} (took ${r.durationSeconds} s)`);
  out.push(
    `- Cluster: ${r.cluster.endpoint}: \`${r.cluster.name}\`, Elasticsearch ${r.cluster.version} (${r.cluster.buildFlavor}, Lucene ${r.cluster.luceneVersion}), ` +
      `${r.cluster.nodes} node(s), ${r.cluster.dataNodes} data node(s), health ${r.cluster.health}`,
  );
  if (r.index)
    out.push(
      `- Index: ${r.index.primaryShards ?? "?"} primary shard(s), ${r.index.replicas ?? "?"} replica(s), refresh interval ${r.index.refreshInterval}, ` +
        `on ${r.index.nodesHoldingShards || "?"} node(s); deleted afterwards (${r.cleanup.deleted.join(", ") || "nothing to delete"})`,
    );
  out.push(
    `- Client: ${m.nproc} CPUs, ${m.totalMemoryGiB} GiB RAM, ${m.cpuModel}; Node ${m.node}; commit ${m.commit}; ` +
      `load average ${m.loadAverage.start} → ${m.loadAverage.end}`,
  );
  out.push(
    `- Options: ${r.options.passages.toLocaleString("en")} passages, ${r.options.tenants} tenants (Zipf, exponent ${r.options.tenantZipfExponent}), ` +
      `${r.options.passagesPerFile} passages per file, ${r.options.concurrency} files at a time, ${r.options.queries} measured searches per tenant ` +
      `after ${r.options.warmupQueriesPerTenant} warm-up, limit ${r.options.limit}`,
    "",
  );
  if (r.errors.length > 0 || r.cleanup.error || r.cleanup.leftover.length > 0) {
    out.push("## Problems", "");
    for (const e of r.errors) out.push(`- ${e.split("\n")[0]}`);
    if (r.cleanup.error)
      out.push(
        `- Cleanup failed: ${r.cleanup.error}; delete \`${r.index?.alias ?? "locus-bench-*"}*\` by hand`,
      );
    if (r.cleanup.leftover.length > 0) out.push(`- Still on the cluster: ${r.cleanup.leftover.join(", ")}`);
    out.push("");
  }

  out.push("## How to read this for sizing", "");
  for (const n of r.sizing) out.push(`- ${n}`);
  out.push("");

  out.push("## Dataset and loading", "");
  out.push(
    `Passages of ~300 characters of Zipf-distributed words (the search benchmark's corpus, seeded), as the PDF extractor cuts them, ` +
      `written through \`ElasticsearchSearchIndex.replaceFilePassages\` — ids \`<user>:<file>:<ord>\`, routed by user, bulk requests of up to ` +
      `${r.options.adapterBulkBatch} passages (so one per file here), the file's last request waiting for a refresh — with files from all tenants interleaved.`,
    "",
  );
  const d = r.dataset;
  const rows: (string | number)[][] = [
    ["tenants", d.tenants],
    ["passages", d.passages.toLocaleString("en")],
    ["files", d.files.toLocaleString("en")],
    [
      "passages of the largest / median / smallest tenant",
      `${d.tenantPassages.largest.toLocaleString("en")} / ${d.tenantPassages.median.toLocaleString("en")} / ${d.tenantPassages.smallest.toLocaleString("en")}`,
    ],
    ["text per passage", `${d.sourceBytesPerPassage} bytes`],
  ];
  if (r.load) {
    const l = r.load;
    rows.push(
      ["load time", `${l.seconds} s`],
      ["**passages/s**", `**${l.passagesPerSecond}**`],
      ["files/s", l.filesPerSecond],
      [
        "per file (ms): p50 / p95 / p99 / max",
        `${fmt(l.perFileMs.p50)} / ${fmt(l.perFileMs.p95)} / ${fmt(l.perFileMs.p99)} / ${fmt(l.perFileMs.max)}`,
      ],
      ["files retried after 503 or timeout", l.retriedFiles],
      ["text generation (in the benchmark process)", `${l.generationSeconds} s`],
      ["benchmark process CPU while loading", `${l.clientCpuCores} cores`],
    );
  }
  if (r.index) {
    const ix = r.index;
    rows.push(
      [
        "documents in the index",
        `${ix.docs.toLocaleString("en")}${ix.docsMatchPassages ? " (= passages)" : " (≠ passages!)"}`,
      ],
      ["size, primaries", `${size(ix.primaryBytes)} (${ix.primaryBytesPerPassage} bytes per passage)`],
      ["size, with replicas", `${size(ix.totalBytes)} (${ix.totalBytesPerPassage} bytes per passage)`],
    );
  }
  out.push(table(["", "value"], rows), "");

  if (r.search.tenants.length > 0) {
    out.push("## Quick search through the adapter", "");
    out.push(
      "Sequential `ElasticsearchSearchIndex.search({ userId, text, limit })` calls from the benchmark process, after a warm-up, " +
        "timed from the call to its result (request building, the round trip, parsing). Query classes: " +
        QUERY_CLASSES.map((c) => `\`${c}\` ${CLASS_DESCRIPTIONS[c]}`).join("; ") +
        ". The same seeded queries for every tenant.",
      "",
    );
    const head = [
      "tenant",
      "passages",
      "files",
      "queries",
      "p50 ms",
      "p95 ms",
      "p99 ms",
      "mean ms",
      "max ms",
      "mean results",
    ];
    const row = (name: string, passages: string, files: string, c: ClassFigures) => [
      name,
      passages,
      files,
      c.queries,
      fmt(c.latencyMs.p50),
      fmt(c.latencyMs.p95),
      fmt(c.latencyMs.p99),
      fmt(c.latencyMs.mean),
      fmt(c.latencyMs.max),
      c.meanResults,
    ];
    const tenantRows = r.search.tenants.map((t) =>
      row(
        `${t.label} (#${t.rank})`,
        t.passages.toLocaleString("en"),
        t.files.toLocaleString("en"),
        t.overall,
      ),
    );
    if (r.search.overall) tenantRows.push(row("**all**", "", "", r.search.overall));
    out.push(table(head, tenantRows), "");
    for (const t of r.search.tenants) {
      out.push(`### ${t.label} tenant (${t.passages.toLocaleString("en")} passages), by query class`, "");
      out.push(
        table(
          ["class", "n", "p50 ms", "p95 ms", "p99 ms", "mean ms", "max ms", "mean results"],
          QUERY_CLASSES.flatMap((cls) => {
            const c = t.byClass[cls];
            return c
              ? [
                  [
                    cls,
                    c.queries,
                    fmt(c.latencyMs.p50),
                    fmt(c.latencyMs.p95),
                    fmt(c.latencyMs.p99),
                    fmt(c.latencyMs.mean),
                    fmt(c.latencyMs.max),
                    c.meanResults,
                  ],
                ]
              : [];
          }),
        ),
        "",
      );
      out.push(
        `Slowest: ${t.slowest.map((q) => `"${q.q}" (${q.cls}, ${q.results} results) ${q.ms} ms`).join("; ")}. ` +
          `Checks: results from another tenant's files: ${t.checks.tenancyLeaks}; phrase queries that found exactly the planted passages, ` +
          `one with the phrase first: ${t.checks.phraseQueriesExact}; absent-word queries with no result: ${t.checks.absentQueriesEmpty}.`,
        "",
      );
    }
  }
  if (r.dryRunRequests) {
    out.push("## Requests the fake cluster answered (dry run)", "");
    out.push(
      table(
        ["request", "count"],
        Object.entries(r.dryRunRequests).map(([k, n]) => [`\`${k}\``, n]),
      ),
      "",
    );
  }
  if (r.cluster.nodeList) {
    out.push("## Nodes", "");
    out.push(
      table(
        ["node", "roles", "heap max", "RAM max", "CPUs"],
        r.cluster.nodeList.map((n) => [n.name, n.roles, n.heapMax, n.ramMax, n.cpu]),
      ),
      "",
    );
  }
  return out.join("\n");
}

/** Writes bench/report/elasticsearch-<date>.md and .json (`elasticsearch-dry-run-<date>` for a dry run). */
export function writeEsReport(r: EsReport): { md: string; json: string } {
  mkdirSync(REPORT_DIR, { recursive: true });
  const stamp = r.date.replace(/\.\d+Z$/, "Z").replace(/:/g, "");
  const base = join(REPORT_DIR, `elasticsearch-${r.dryRun ? "dry-run-" : ""}${stamp}`);
  const write = (path: string, text: string) => {
    writeFileSync(`${path}.tmp`, text);
    renameSync(`${path}.tmp`, path);
  };
  write(`${base}.md`, renderEsMarkdown(r));
  write(`${base}.json`, `${JSON.stringify(r, null, 2)}\n`);
  return { md: `${base}.md`, json: `${base}.json` };
}

/** The summary printed at the end of a run. */
export function esSummary(r: EsReport): string[] {
  const lines = [`Locus Elasticsearch benchmark${r.dryRun ? " (DRY RUN: fake in-process cluster)" : ""}`];
  lines.push(
    `  cluster: ${r.cluster.endpoint}, Elasticsearch ${r.cluster.version}, ${r.cluster.nodes} node(s), ${r.cluster.dataNodes} data`,
  );
  if (r.load)
    lines.push(
      `  loading: ${r.dataset.passages.toLocaleString("en")} passages, ${r.dataset.tenants} tenants in ${r.load.seconds} s: ` +
        `${r.load.passagesPerSecond} passages/s; per file p50 ${r.load.perFileMs.p50} ms, p95 ${r.load.perFileMs.p95} ms, p99 ${r.load.perFileMs.p99} ms`,
    );
  if (r.index)
    lines.push(
      `  index: ${r.index.docs.toLocaleString("en")} documents, ${size(r.index.primaryBytes)} primaries (${r.index.primaryBytesPerPassage} bytes/passage), ${size(r.index.totalBytes)} with replicas`,
    );
  for (const t of r.search.tenants) {
    const l = t.overall.latencyMs;
    lines.push(
      `  search, ${t.label} tenant (${t.passages.toLocaleString("en")} passages): p50 ${l.p50} ms, p95 ${l.p95} ms, p99 ${l.p99} ms; ` +
        `leaks ${t.checks.tenancyLeaks}, phrases ${t.checks.phraseQueriesExact}, absent ${t.checks.absentQueriesEmpty}`,
    );
  }
  if (r.search.overall) {
    const l = r.search.overall.latencyMs;
    lines.push(
      `  search, all: p50 ${l.p50} ms, p95 ${l.p95} ms, p99 ${l.p99} ms (${r.search.overall.queries} queries)`,
    );
  }
  lines.push(
    `  cleanup: deleted ${r.cleanup.deleted.join(", ") || "nothing"}` +
      (r.cleanup.leftover.length > 0 || r.cleanup.error
        ? `; PROBLEM: ${r.cleanup.error ?? r.cleanup.leftover.join(", ")}`
        : "; nothing left"),
  );
  for (const e of r.errors) lines.push(`  ERROR ${e.split("\n")[0]}`);
  return lines;
}
