// The Elasticsearch benchmark's options and constants, and the shape of its report.
import type { Machine } from "./report.ts";
import { DEFAULT_SEARCH_OPTIONS, type QueryClass } from "./search-latency.ts";
import type { Summary } from "./stats.ts";

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

export const PASSAGES_PER_FILE = 50;
/** Tenant k (1-based) holds a share proportional to 1/k^s of the passages. */
export const TENANT_ZIPF_EXPONENT = 1;
export const LIMIT = DEFAULT_SEARCH_OPTIONS.limit;
export const VOCABULARY_SIZE = DEFAULT_SEARCH_OPTIONS.vocabularySize;
/** Unmeasured searches per measured tenant before the measured ones. */
export const WARMUP_PER_TENANT = 50;
/** Attempts for one file when the cluster answers "unavailable" (503, timeouts), as bus redelivery would. */
export const FILE_ATTEMPTS = 3;
/** The adapter's default bulk request size (passages), for the report. */
export const ADAPTER_BULK_BATCH = 500;
export const DRY_RUN_NODE = "http://dry-run.invalid:9200";

export type TenantLabel = "small" | "medium" | "largest";

export interface ClassFigures {
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
