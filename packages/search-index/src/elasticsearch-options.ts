// The adapter's settings, and the client options they make.

import type { Client, ClientOptions } from "@elastic/elasticsearch";

export interface ElasticsearchSearchIndexOptions {
  /** Cluster URL, e.g. `https://es.internal:9200`. One of `node` or `cloudId` (unless `client`). */
  node?: string;
  /** Elastic Cloud deployment id, instead of `node`. */
  cloudId?: string;
  /** API key (the base64 `id:key` form Elasticsearch hands out). Takes precedence over basic auth. */
  apiKey?: string;
  username?: string;
  password?: string;
  /** PEM text of the CA that signed the cluster's certificate (self-managed clusters). */
  caCertificate?: string;
  /**
   * Longest wait for any one request, in ms (default 10,000): past it the call fails with 503.
   * The client's HTTP connection (undici) keeps time in steps of about a second.
   */
  requestTimeoutMs?: number;
  /**
   * Retries the client makes on connection errors and 502/503/504 (default 3). Against one node
   * that refuses connections they back off 1-2 s, then 2-4 s each, so a call fails with 503 after
   * up to about 10 s with the default; `check()` never retries.
   */
  maxRetries?: number;
  /** The alias every read and write goes through; physical indexes are `<prefix>-v<N>...` (default `locus-passages`). */
  indexPrefix?: string;
  /** Passages per bulk request (default 500); a request is also closed at about 5 MB. */
  bulkBatchSize?: number;
  /** Attempts for one bulk request rejected with 429/503, whole or per item (default 6). */
  bulkMaxAttempts?: number;
  /** First back-off between those attempts, in ms, doubling each time up to 5 s (default 250). */
  bulkRetryDelayMs?: number;
  /**
   * Dimensions of the `local` vectors, those of the offline embedder (default 100). A vector of
   * another length is rejected by the cluster, failing its file's indexing. Changing it changes the
   * mapping: an existing index keeps its dimensions until `rebuild()` moves to a fresh one.
   */
  localVectorDims?: number;
  /**
   * Dimensions of the `remote` vectors, those of the configured remote embedder. Unset (the
   * default), Elasticsearch 8.x takes them from the first remote vector the index receives. Either
   * way they are fixed for the index's life: a remote model of other dimensions needs `rebuild()`.
   */
  remoteVectorDims?: number;
  /** Primary shards of a new index (default: the cluster's, 1 in 8.x). Routing by user needs more than 1 to matter. */
  shards?: number;
  /** Replicas of a new index (default: the cluster's, 1). */
  replicas?: number;
  /**
   * While the index behind the alias has refused the filter attribute fields (an older mapping,
   * before `rebuild()`), how often to look whether the alias has moved to a current index since,
   * in ms (default 30,000): a rebuild run by another process (the CLI, a Job) is seen that soon.
   */
  mappingRecheckMs?: number;
  /** A ready client instead of connection settings (tests inject one built on the vendor's mock). */
  client?: Client;
}

export function clientOptions(options: ElasticsearchSearchIndexOptions): ClientOptions {
  if (!options.node && !options.cloudId) {
    throw new Error("Elasticsearch needs a node URL or an Elastic Cloud id.");
  }
  if (options.username !== undefined && options.password === undefined && !options.apiKey) {
    throw new Error("Elasticsearch basic auth needs a password with the username.");
  }
  const auth: ClientOptions["auth"] = options.apiKey
    ? { apiKey: options.apiKey }
    : options.username !== undefined
      ? { username: options.username, password: options.password ?? "" }
      : undefined;
  return {
    ...(options.cloudId ? { cloud: { id: options.cloudId } } : { node: options.node }),
    ...(auth ? { auth } : {}),
    ...(options.caCertificate ? { tls: { ca: options.caCertificate } } : {}),
    requestTimeout: options.requestTimeoutMs ?? 10_000,
    // Connection errors and 502/503/504 are retried; timeouts are not (the client's default): a
    // timed-out request may still run on the cluster, and retrying it would pile onto an overloaded
    // node and multiply the wait. The caller (a 503, a bus redelivery) retries later instead.
    maxRetries: options.maxRetries ?? 3,
  };
}

export function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer.`);
  return value;
}
