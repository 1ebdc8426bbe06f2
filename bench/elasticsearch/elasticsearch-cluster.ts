// The Elasticsearch benchmark's connection to the cluster, what it reads of the cluster and its index, errors.
import { readFileSync } from "node:fs";
import type { EsClient, ElasticsearchSearchIndexOptions, EsClientOptions } from "../harness/deps.ts";
import type { EsBenchOptions, EsReport } from "./elasticsearch-types.ts";
import { round } from "../harness/stats.ts";

// ---------------------------------------------------------------------------------------------
// Connection and cluster

function env(name: string): string | undefined {
  const v = process.env[name];
  return v === undefined || v === "" ? undefined : v;
}

/** Connection settings as the server reads them (ELASTICSEARCH_* variables), for a real cluster. */
export function connectionSettings(
  options: EsBenchOptions,
): Omit<ElasticsearchSearchIndexOptions, "indexPrefix"> {
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
export function adminClientOptions(settings: ReturnType<typeof connectionSettings>): EsClientOptions {
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

export function endpointLabel(options: EsBenchOptions): string {
  if (options.dryRun) return "in-process fake cluster (dry run)";
  if (!options.url) return "Elastic Cloud (cloud id)";
  const u = new URL(options.url);
  u.username = "";
  u.password = "";
  return u.toString().replace(/\/$/, "");
}

/** Indexes that belong to this run: the alias's own name or `<prefix>-...`, nothing else. */
export async function ownIndexes(admin: EsClient, prefix: string): Promise<string[]> {
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

/**
 * The cluster's name and version: from `GET /`, or, where a distribution has no root endpoint
 * (Elastic's integration-test zip, which tools/elasticsearch/start.sh runs), from the nodes' info.
 */
async function versionFacts(admin: EsClient): Promise<{
  name: string;
  version: string;
  buildFlavor: string;
  luceneVersion: string;
}> {
  try {
    const info = await admin.info();
    return {
      name: info.cluster_name,
      version: info.version.number,
      buildFlavor: info.version.build_flavor,
      luceneVersion: info.version.lucene_version,
    };
  } catch (err) {
    // That distribution answers `GET /` with 405 (only DELETE is routed there).
    if (![400, 404, 405].includes((err as { statusCode?: number }).statusCode ?? 0)) throw err;
    const nodes = await admin.nodes.info({ node_id: "_local" });
    const node = Object.values(nodes.nodes)[0];
    return {
      name: nodes.cluster_name,
      version: node?.version ?? "?",
      buildFlavor: node?.build_flavor ?? "?",
      luceneVersion: "?",
    };
  }
}

/** Each data node's JVM heap, used and most, from `_nodes/stats/jvm`. */
export async function heapFacts(admin: EsClient): Promise<NonNullable<EsReport["heap"]>> {
  const stats = await admin.nodes.stats({ metric: "jvm" });
  return Object.values(stats.nodes).map((n) => ({
    name: n.name ?? "?",
    usedBytes: Number(n.jvm?.mem?.heap_used_in_bytes ?? 0),
    maxBytes: Number(n.jvm?.mem?.heap_max_in_bytes ?? 0),
  }));
}

export async function clusterFacts(admin: EsClient, options: EsBenchOptions): Promise<EsReport["cluster"]> {
  const info = await versionFacts(admin);
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
    ...info,
    health: health.status,
    nodes: health.number_of_nodes,
    dataNodes: health.number_of_data_nodes,
    nodeList,
  };
}

export async function indexFacts(
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

export const isUnavailable = (err: unknown) =>
  typeof err === "object" && err !== null && (err as { code?: unknown }).code === "unavailable";
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
export const seconds = (ms: number) =>
  ms < 90_000
    ? `${Math.round(ms / 1000)} s`
    : ms < 5_400_000
      ? `${round(ms / 60_000)} min`
      : `${round(ms / 3_600_000)} h`;
