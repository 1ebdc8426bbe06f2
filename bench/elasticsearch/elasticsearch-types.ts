// The Elasticsearch benchmark's options and constants, and the shape of its report.
import type { Machine } from "../harness/machine.ts";
import { DEFAULT_SEARCH_OPTIONS, type QueryClass } from "../search/search-latency.ts";
import type { Summary } from "../harness/stats.ts";

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
  /** Every passage with its vector from the sentence encoder, and ai mode's kNN searches timed. */
  vectors: boolean;
}

export const DEFAULT_ES_OPTIONS = {
  passages: 1_000_000,
  tenants: 100,
  queries: 500,
  concurrency: 4,
  vectors: true,
};

export const PASSAGES_PER_FILE = 50;
/** Tenant k (1-based) holds a share proportional to 1/k^s of the passages. */
export const TENANT_ZIPF_EXPONENT = 1;
export const LIMIT = DEFAULT_SEARCH_OPTIONS.limit;
/** The neighbours ai mode asks the index for at limit 10: twice the results and one more (search-service.ts). */
export const KNN_LIMIT = 2 * (10 + 1);
/** kNN results compared with the exact nearest (by cosine over the tenant's vectors) for recall. */
export const RECALL_AT = 10;
/** kNN searches per measured tenant whose recall is measured (each an exact scan in the benchmark). */
export const RECALL_QUERIES = 50;
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
    /** Three consecutive words of one of the tenant's passages: queries whose first result has them in order. */
    phraseQueriesFirst: string;
    absentQueriesEmpty: string;
  };
}

/** ai mode's vector half for one tenant: `vectorSearch` of the question's vector, KNN_LIMIT neighbours. */
export interface TenantKnnResult {
  label: TenantLabel;
  rank: number;
  passages: number;
  warmupQueries: number;
  figures: ClassFigures;
  /** Results naming a file of another tenant: must be 0. */
  tenancyLeaks: number;
  /** Share of the exact RECALL_AT nearest that the first RECALL_AT results hold, over RECALL_QUERIES questions. */
  recall: number;
  /** Largest difference between a result's score and its exact cosine (mapped as the index maps it). */
  maxScoreError: number;
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
    knnLimit: number;
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
    /** Where the text comes from (bench/corpus/real-text.ts), and how many distinct passages the tenants share. */
    text: string;
    distinctPassages: number;
    /** The passages' vectors: the encoder, its dimensions, and how many it encoded in this run (the rest were cached). */
    vectors: { model: string; space: string; dims: number; encodedNow: number; encodeSeconds: number } | null;
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
  /** ai mode's kNN searches, when the passages have vectors. */
  knn: { tenants: TenantKnnResult[]; overall: ClassFigures | null } | null;
  /** The data nodes' JVM heap after the searches (`_nodes/stats/jvm`), in bytes. */
  heap: { name: string; usedBytes: number; maxBytes: number }[] | null;
  sizing: string[];
  cleanup: { deleted: string[]; leftover: string[]; error: string | null };
  errors: string[];
  /** Dry run only: the requests the fake cluster answered, by shape, to check what the adapter sends. */
  dryRunRequests: Record<string, number> | null;
}
