import {
  Client,
  type ClientOptions,
  type TransportRequestOptions,
  type estypes,
} from "@elastic/elasticsearch";
import { LocusError, type Locator } from "@locus/contracts";
import { backoffDelay } from "@locus/runtime";
import {
  boundedRanges,
  indexTerms,
  inRangeOrder,
  normaliseScore,
  queryTerms,
  type FilePassages,
  type FileRef,
  type IndexedPassage,
  type PassageHit,
  type PassageRange,
  type SearchIndex,
  type VectorQuery,
  type VectorSlot,
} from "./search-index.ts";
import { BM25_B, BM25_K1 } from "./bm25.ts";

/**
 * Version of the mapping and analysis below. Bump it with any change to them: the physical index is
 * `<prefix>-v<N>`, and a deployment moves to a new version with `rebuild()` (a fresh index, loaded
 * from stored extractions, swapped in behind the alias), never by editing a live mapping.
 */
export const ELASTICSEARCH_MAPPING_VERSION = 3;

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
  /** A ready client instead of connection settings (tests inject one built on the vendor's mock). */
  client?: Client;
}

/** What one passage is stored as. */
interface PassageDocument {
  user_id: string;
  file_id: string;
  ord: number;
  content: string;
  words: string;
  locator: Locator;
  /** Per slot present: the vector as plain numbers, and its space (see PassageVectors). */
  local_vector?: number[];
  local_space?: string;
  remote_vector?: number[];
  remote_space?: string;
}

type HitSource = Pick<PassageDocument, "file_id" | "ord" | "content" | "locator">;

const DEFAULT_PREFIX = "locus-passages";
const DEFAULT_BATCH = 500;
/** Elasticsearch advises bulk requests of a few MB; far below `http.max_content_length` (100 MB). */
const BATCH_BYTES = 5 * 1024 * 1024;
const RETRY_CAP_MS = 5_000;
/** `index.max_result_window`: a larger `size` is an error, not a longer list. */
const MAX_RESULT_WINDOW = 10_000;
/** Index names: lower case, no characters Elasticsearch forbids, no leading `-`, `_` or `+`. */
const PREFIX_PATTERN = /^[a-z0-9][a-z0-9._-]{0,200}$/;
const UNAVAILABLE = "The search index is unavailable; try again shortly.";
const VECTOR_SLOTS: readonly VectorSlot[] = ["local", "remote"];
const DEFAULT_LOCAL_DIMS = 100;
/** Elasticsearch's ceiling for `k` and `num_candidates` of a kNN search. */
const MAX_KNN_CANDIDATES = 10_000;

/**
 * Settings and mappings of a passage index (what an index template would hold; the adapter creates
 * its versioned indexes itself, so it sends them with each create).
 *
 * Matching runs on `words`, not on `content`: `words` is the passage's terms (`indexTerms`: the
 * words of `words()`, folded and Porter-stemmed in JavaScript) joined by spaces, the same terms
 * SQLite and Postgres index, split again here on whitespace only and neither folded nor stemmed
 * again, so a query's terms are exactly the indexed ones in every backend. Elasticsearch's own
 * analysis would differ (the standard tokenizer splits CJK runs into single characters; its
 * stemmers are not the same code). No stop-word filter: the shared `queryTerms` is the one
 * stop-word policy, and a query of only stop words must match. (Version 2 stemmed and folded
 * here, and boosted exact forms and phrases, which no other backend did.)
 * - `content`: the passage as given, returned verbatim, not indexed: a second inverted index of
 *   the same text would double the index for nothing a search uses (see `search` on highlighting).
 * - `locator`: typed for range queries and sorting later; `bbox` is kept in `_source` only.
 * - `kind` (pdf, image, audio, video) is mapped for filters to come; the port does not carry it yet.
 * - `local_vector` and `remote_vector`: each passage's vectors (see PassageVectors), indexed for
 *   approximate kNN (HNSW) with cosine similarity, each beside its space (`local_space`,
 *   `remote_space`, keywords) that a vector search filters on. `local_vector` has `localVectorDims`
 *   dimensions (default 100); `remote_vector` has `remoteVectorDims` when given, else Elasticsearch
 *   8.x sets them from the first vector indexed. A passage without a vector in a slot costs nothing
 *   there. Other dimensions take a fresh index: `rebuild()`.
 * - `_source.excludes` leaves both vectors out of the stored `_source`. As JSON they are several
 *   times the size of the passage's text (100 floats of up to 20 characters each, per slot), and
 *   nothing reads them back: searches name the fields they return, and `rebuild()` is handed its
 *   passages with their vectors from the stored extractions, never reading this index. They stay
 *   in the kNN index, which is all a vector search uses. The price: `_reindex` or `_update` would
 *   drop them, and the adapter uses neither (it writes whole documents, and moves to a new index
 *   with `rebuild()`).
 * - `settings.index.similarity`: BM25 with the k1 and b of every backend. Its statistics are the
 *   shard's (every user routed there) and its idf Lucene's (never below 0), where SQLite and
 *   Postgres use the user's own and FTS5's idf: the same words match, the order can differ.
 * - `_routing.required`: every write must name its user's shard; a write that forgot would
 *   otherwise land on another shard and duplicate a passage instead of replacing it.
 */
export function passageIndexBody(
  options: { localVectorDims?: number; remoteVectorDims?: number; shards?: number; replicas?: number } = {},
): {
  settings: estypes.IndicesIndexSettings;
  mappings: estypes.MappingTypeMapping;
} {
  const index: estypes.IndicesIndexSettings = {};
  if (options.shards !== undefined) index.number_of_shards = options.shards;
  if (options.replicas !== undefined) index.number_of_replicas = options.replicas;
  // BM25 with the parameters every backend uses (bm25.ts), said rather than left to the cluster's
  // defaults. They are Elasticsearch's defaults too, so indexes made before this was said (same
  // mapping version) rank the same.
  index.similarity = { default: { type: "BM25", k1: BM25_K1, b: BM25_B } };
  return {
    settings: { index },
    mappings: {
      dynamic: "strict",
      _routing: { required: true },
      _source: { excludes: VECTOR_SLOTS.map((slot) => `${slot}_vector`) },
      properties: {
        user_id: { type: "keyword" },
        file_id: { type: "keyword" },
        ord: { type: "integer" },
        content: { type: "text", index: false },
        words: { type: "text", analyzer: "whitespace" },
        locator: {
          type: "object",
          // A locator key added later is kept in _source (and returned) before it is mapped.
          dynamic: false,
          properties: {
            page: { type: "integer" },
            line: { type: "integer" },
            line_end: { type: "integer" },
            timestamp: { type: "float" },
            timestamp_end: { type: "float" },
            bbox: { type: "object", enabled: false },
            source: { type: "keyword" },
          },
        },
        kind: { type: "keyword" },
        local_vector: {
          type: "dense_vector",
          dims: options.localVectorDims ?? DEFAULT_LOCAL_DIMS,
          index: true,
          similarity: "cosine",
        },
        local_space: { type: "keyword" },
        remote_vector: {
          type: "dense_vector",
          ...(options.remoteVectorDims !== undefined ? { dims: options.remoteVectorDims } : {}),
          index: true,
          similarity: "cosine",
        },
        remote_space: { type: "keyword" },
      },
    },
  };
}

/** One passage ready for a bulk request: its action and document lines, already serialised. */
interface BulkItem {
  action: string;
  document: string;
  bytes: number;
}

/**
 * Passages in Elasticsearch 8.x, one index behind an alias.
 *
 * - Tenancy is in the engine: every search and delete filters on `user_id` (a `term` in
 *   `bool.filter`, so it is cached and unscored), and every write, delete and search is routed by
 *   user id, so one tenant's passages sit on one shard and a search touches only that shard.
 * - User text never reaches a query parser: queries are `match`/`match_phrase` over the shared
 *   `queryTerms`, which are only letters, marks and digits.
 * - Vectors: each passage's `local` and `remote` vectors, each with its space, in `dense_vector`
 *   fields; `vectorSearch` is one approximate kNN search (HNSW) filtered on the user and the space.
 * - Versioned index behind an alias: reads and writes go to the alias `<prefix>`; the physical index
 *   is `<prefix>-v<N>` (N = ELASTICSEARCH_MAPPING_VERSION) and `rebuild()` swaps in a new one.
 * - Unreachable, timing out or overloaded clusters surface as LocusError("unavailable") (503 at
 *   the HTTP layer, a retry for workers); a request never waits longer than `requestTimeoutMs`.
 */
export class ElasticsearchSearchIndex implements SearchIndex {
  private readonly client: Client;
  private readonly alias: string;
  private readonly batchSize: number;
  private readonly maxAttempts: number;
  private readonly retryDelayMs: number;
  private readonly body: ReturnType<typeof passageIndexBody>;
  /** Dimensions each slot's vectors must have, where known (remote's may be left to the cluster). */
  private readonly dims: Partial<Record<VectorSlot, number>>;
  private ready: Promise<void> | undefined;
  private closed = false;

  constructor(options: ElasticsearchSearchIndexOptions) {
    this.alias = options.indexPrefix ?? DEFAULT_PREFIX;
    if (!PREFIX_PATTERN.test(this.alias)) {
      throw new Error(
        `Elasticsearch index prefix ${JSON.stringify(this.alias)} must be lower-case letters, digits, '.', '_' and '-', starting with a letter or digit.`,
      );
    }
    this.batchSize = positiveInteger("bulkBatchSize", options.bulkBatchSize ?? DEFAULT_BATCH);
    this.maxAttempts = positiveInteger("bulkMaxAttempts", options.bulkMaxAttempts ?? 6);
    this.retryDelayMs = options.bulkRetryDelayMs ?? 250;
    const local = positiveInteger("localVectorDims", options.localVectorDims ?? DEFAULT_LOCAL_DIMS);
    const remote =
      options.remoteVectorDims === undefined
        ? undefined
        : positiveInteger("remoteVectorDims", options.remoteVectorDims);
    this.dims = { local, ...(remote !== undefined ? { remote } : {}) };
    this.body = passageIndexBody({ ...options, localVectorDims: local, remoteVectorDims: remote });
    this.client = options.client ?? new Client(clientOptions(options));
  }

  /** The alias every read and write goes through. */
  get aliasName(): string {
    return this.alias;
  }

  /**
   * Creates the current version's index with the alias pointing at it, unless the alias exists.
   * Called once before first use, and by every `check()` (so a deleted alias comes back).
   */
  async ensureIndex(): Promise<void> {
    await this.ensureIndexWith({});
  }

  private async ensureIndexWith(request: TransportRequestOptions): Promise<void> {
    try {
      if (await this.client.indices.existsAlias({ name: this.alias }, request)) return;
      const index = `${this.alias}-v${ELASTICSEARCH_MAPPING_VERSION}`;
      try {
        await this.client.indices.create({ index, ...this.body, aliases: { [this.alias]: {} } }, request);
      } catch (err) {
        // Another process created it between our check and our create: fine, if it has the alias.
        // An index left without its alias (an operator removed it) gets it back.
        if (errorType(err) !== "resource_already_exists_exception") throw err;
        if (await this.client.indices.existsAlias({ name: this.alias }, request)) return;
        await this.client.indices.updateAliases(
          { actions: [{ add: { index, alias: this.alias } }] },
          request,
        );
      }
    } catch (err) {
      throw unavailableIfDown(err);
    }
  }

  /**
   * Writes the file's passages in bounded bulk requests, with ids `<user>:<file>:<ord>`, then
   * removes the file's passages beyond the new count.
   *
   * Consistency, compared with SQLite's and Postgres's single transaction: Elasticsearch has no
   * multi-document transaction, so while a file is re-indexed a reader may briefly see a mix of
   * its old and new sets (new passages for the first ords beside old ones for the rest, or an old
   * set already trimmed to the new count). For a file of one batch (500 passages, the common
   * case) that takes a refresh falling between the trailing delete and the last bulk request; for
   * a larger file the mix can show while its batches are written, and if the stream fails midway
   * it stays until the message is redelivered. Because ids are deterministic, every replacement
   * overwrites the same documents instead of adding new ones, and the trailing delete removes what
   * the old set had beyond the new count, so the index converges on the last complete replacement
   * and never holds duplicates.
   *
   * Visibility: the trailing delete runs just before the last bulk request, and that request waits
   * for a refresh (`refresh: wait_for`), which shows both the new passages and the deletions, so the
   * file is searchable when this returns (the indexer then marks it ready) without forcing a
   * refresh per file. An empty replacement has no bulk request: its delete forces the refresh.
   */
  async replaceFilePassages(file: FileRef, passages: AsyncIterable<IndexedPassage>): Promise<number> {
    await this.whenReady();
    const batches = this.batches(this.alias);
    let count = 0;
    for await (const passage of passages) {
      await batches.add(bulkItem(file, count, passage));
      count += 1;
    }
    await this.deleteByQuery(file, { range: { ord: { gte: count } } }, count === 0);
    await batches.flush(true);
    return count;
  }

  async deleteFilePassages(file: FileRef): Promise<void> {
    await this.whenReady();
    await this.deleteByQuery(file, undefined, true);
  }

  /**
   * Any of the query's terms (`queryTerms`: stop words dropped unless that leaves none), best
   * first by BM25: one `match` on `words`, as SQLite and Postgres rank any of the terms.
   *
   * No highlighting is requested: neither PassageHit nor the public search API (fixed at 1.0.0) has
   * a place for it, and highlighting costs work on every hit. It needs a port change first; the
   * mapping would then index `content` for it (a mapping version bump and a rebuild).
   */
  async search(query: { userId: string; text: string; limit: number }): Promise<PassageHit[]> {
    const terms = queryTerms(query.text);
    const size = Math.min(MAX_RESULT_WINDOW, Math.max(0, Math.floor(query.limit)));
    if (terms.length === 0 || size === 0) return [];
    await this.whenReady();
    try {
      const response = await this.client.search<HitSource>({
        index: this.alias,
        routing: query.userId,
        ...searchBody(query.userId, terms, size),
      });
      return hitsOf(response, normaliseScore);
    } catch (err) {
      throw this.failure(err);
    }
  }

  /**
   * One approximate kNN search (HNSW) of the slot's field, routed to the user's shard and filtered
   * (inside the kNN search, so `k` counts only matching passages) on the user and the query's
   * space. Elasticsearch's cosine `_score` is (1 + cos) / 2; hits carry cos, negatives as 0.
   *
   * A query that could match nothing sends no request: a limit below 1 (or NaN), an unknown slot,
   * a vector that is empty, all zeros (cosine is undefined for it, and Elasticsearch rejects it) or
   * not finite, or one whose length is not the slot's known dimensions (no passage of this index
   * can hold a vector of that space; SQLite and Postgres return nothing for it either). With
   * `remoteVectorDims` unset, a remote query of other dimensions than the index's is the cluster's
   * 400, passed through.
   */
  async vectorSearch(query: VectorQuery): Promise<PassageHit[]> {
    const { userId, slot, vector } = query;
    const size = Math.min(MAX_KNN_CANDIDATES, Math.max(0, Math.floor(query.limit)));
    if (!(size > 0) || !VECTOR_SLOTS.includes(slot) || !storable(vector)) return [];
    const dims = this.dims[slot];
    if (dims !== undefined && vector.length !== dims) return [];
    await this.whenReady();
    try {
      const response = await this.client.search<HitSource>({
        index: this.alias,
        routing: userId,
        ...vectorSearchBody(query, size),
      });
      return hitsOf(response, (score) => Math.min(1, Math.max(0, 2 * score - 1)));
    } catch (err) {
      throw this.failure(err);
    }
  }

  /** One search of every range (a filter each), routed to the user's shard; ordered here. */
  async passagesInRanges(query: { userId: string; ranges: readonly PassageRange[] }): Promise<PassageHit[]> {
    const ranges = boundedRanges(query.ranges);
    if (ranges.length === 0) return [];
    await this.whenReady();
    try {
      const response = await this.client.search<HitSource>({
        index: this.alias,
        routing: query.userId,
        ...rangesBody(query.userId, ranges),
      });
      return inRangeOrder(
        ranges,
        hitsOf(response, () => 0),
      );
    } catch (err) {
      throw this.failure(err);
    }
  }

  /**
   * The cluster answers and the alias exists (created if it was missing). Without the client's
   * retries: a readiness probe needs a quick answer, and its next run is the retry.
   */
  async check(): Promise<void> {
    await this.ensureIndexWith({ maxRetries: 0 });
    this.ready ??= Promise.resolve();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.client.close();
  }

  /**
   * Zero-downtime reindex: loads every file's passages into a new physical index
   * (`<prefix>-v<N>-<timestamp>`, created with the current mapping), refreshes it, then moves the
   * alias to it in one `updateAliases` request (remove + add, atomic for readers) and deletes the old
   * index. Searches keep using the old index until the swap. On any failure the new index is
   * deleted and the alias is left as it was.
   *
   * Writes that go to the alias while a rebuild runs land in the old index and are lost with it,
   * and a file deleted after the source listed it comes back: run it with the indexer paused (or
   * re-index files changed since it started).
   */
  async rebuild(source: AsyncIterable<FilePassages>): Promise<{ files: number; passages: number }> {
    const target = `${this.alias}-v${ELASTICSEARCH_MAPPING_VERSION}-${Date.now()}`;
    let created = false;
    try {
      const old = (await this.client.indices.existsAlias({ name: this.alias }))
        ? Object.keys(await this.client.indices.getAlias({ name: this.alias }))
        : [];
      // No refreshes while loading (the index is not searched yet): fewer, larger segments.
      await this.client.indices.create({
        index: target,
        mappings: this.body.mappings,
        settings: { ...this.body.settings, refresh_interval: "-1" },
      });
      created = true;

      const batches = this.batches(target);
      let files = 0;
      let total = 0;
      for await (const { file, passages } of source) {
        let ord = 0;
        for await (const passage of passages) await batches.add(bulkItem(file, ord++, passage));
        files += 1;
        total += ord;
      }
      await batches.flush(false);

      await this.client.indices.putSettings({ index: target, settings: RESET_REFRESH_INTERVAL });
      await this.client.indices.refresh({ index: target });
      await this.client.indices.updateAliases({
        actions: [
          ...old.map((index) => ({ remove: { index, alias: this.alias } })),
          { add: { index: target, alias: this.alias } },
        ],
      });
      created = false; // It is the live index now: never delete it below.
      this.ready = Promise.resolve();
      if (old.length > 0) {
        await this.client.indices.delete({ index: old }).catch((err: unknown) => {
          throw new Error(
            `Rebuilt the index into ${target} and moved ${this.alias} to it, but could not delete the old index ${old.join(", ")}: delete it by hand.`,
            { cause: err },
          );
        });
      }
      return { files, passages: total };
    } catch (err) {
      if (created) await this.client.indices.delete({ index: target }).catch(() => undefined);
      throw unavailableIfDown(err);
    }
  }

  /**
   * What a failed read or write throws. An alias that has gone (an operator deleted it) makes the
   * next call run ensureIndex again instead of failing until the process restarts.
   */
  private failure(err: unknown): unknown {
    if (errorType(err) === "index_not_found_exception") this.ready = undefined;
    return unavailableIfDown(err);
  }

  /** ensureIndex once per instance; a failure (cluster down) is retried on the next call. */
  private whenReady(): Promise<void> {
    this.ready ??= this.ensureIndex().catch((err: unknown) => {
      this.ready = undefined;
      throw err;
    });
    return this.ready;
  }

  /**
   * Collects bulk items into requests of at most `bulkBatchSize` passages and about 5 MB. A
   * request is sent when the next item would overflow it, so the last one (sent by `flush`) always
   * holds at least one passage and can carry a refresh.
   */
  private batches(index: string): {
    add(item: BulkItem): Promise<void>;
    flush(refresh: boolean): Promise<void>;
  } {
    let pending: BulkItem[] = [];
    let bytes = 0;
    const send = async (refresh: boolean) => {
      const batch = pending;
      pending = [];
      bytes = 0;
      if (batch.length > 0) await this.bulk(index, batch, refresh);
    };
    return {
      add: async (item) => {
        if (pending.length >= this.batchSize || (pending.length > 0 && bytes + item.bytes > BATCH_BYTES)) {
          await send(false);
        }
        pending.push(item);
        bytes += item.bytes;
      },
      flush: send,
    };
  }

  /**
   * Sends one bulk request, retrying what the cluster could not take yet: the whole request on
   * 429/503 (the client itself already retried 502/503/504 and connection errors), or only the
   * items rejected with 429/503 (a full write queue on one node). Exponential back-off with jitter,
   * bounded by `bulkMaxAttempts`; then the cluster counts as unavailable. An item rejected for
   * another reason (a mapping error) fails the call with that reason: retrying cannot fix it.
   */
  private async bulk(index: string, items: readonly BulkItem[], refresh: boolean): Promise<void> {
    let todo = items;
    for (let attempt = 1; ; attempt++) {
      let response: estypes.BulkResponse | undefined;
      try {
        response = await this.client.bulk({
          index,
          // Writes through the alias must never auto-create an index named like it.
          ...(index === this.alias ? { require_alias: true } : {}),
          ...(refresh ? { refresh: "wait_for" as const } : {}),
          operations: todo.flatMap((item) => [item.action, item.document]),
        });
      } catch (err) {
        if (!(isResponseError(err) && RETRYABLE.has(err.statusCode)) || attempt >= this.maxAttempts) {
          throw this.failure(err);
        }
      }
      const retry: BulkItem[] = response ? [] : [...todo];
      if (response?.errors) {
        for (const [i, entry] of response.items.entries()) {
          const result = entry.index;
          const item = todo[i];
          if (!result?.error || !item) continue;
          if (!RETRYABLE.has(result.status)) {
            const { type, reason } = result.error;
            throw new Error(
              `Elasticsearch rejected passage ${result._id ?? item.action} (${result.status} ${type}): ${reason ?? "no reason given"}`,
            );
          }
          retry.push(item);
        }
      }
      if (retry.length === 0) return;
      if (attempt >= this.maxAttempts) {
        throw new LocusError("unavailable", UNAVAILABLE, {
          cause: new Error(`${retry.length} passages still rejected (429/503) after ${attempt} attempts`),
        });
      }
      todo = retry;
      await sleep(backoffDelay(attempt, { baseMs: this.retryDelayMs, maxMs: RETRY_CAP_MS, jitter: true }));
    }
  }

  /** Deletes the file's passages (those matching `also` too, when given), in the user's shard. */
  private async deleteByQuery(
    file: FileRef,
    also: estypes.QueryDslQueryContainer | undefined,
    refresh: boolean,
  ): Promise<void> {
    try {
      const response = await this.client.deleteByQuery({
        index: this.alias,
        routing: file.userId,
        refresh,
        // A passage rewritten while the delete runs (a redelivery) is skipped, not an error.
        conflicts: "proceed",
        query: {
          bool: {
            filter: [
              { term: { user_id: file.userId } },
              { term: { file_id: file.fileId } },
              ...(also ? [also] : []),
            ],
          },
        },
      });
      const failure = response.failures?.[0];
      if (failure) {
        const cause = new Error(
          `delete by query failed for ${response.failures?.length ?? 1} passages (${failure.status}): ${failure.cause.reason ?? failure.cause.type}`,
        );
        if (RETRYABLE.has(failure.status)) throw new LocusError("unavailable", UNAVAILABLE, { cause });
        throw cause;
      }
    } catch (err) {
      throw this.failure(err);
    }
  }
}

/** The search request body (without index and routing): exported for the tests' exact assertions. */
export function searchBody(
  userId: string,
  terms: readonly string[],
  size: number,
): Pick<estypes.SearchRequest, "size" | "track_total_hits" | "_source" | "query"> {
  const should: estypes.QueryDslQueryContainer[] = [
    { match: { words: { query: terms.join(" "), operator: "or" } } },
  ];
  return {
    size,
    track_total_hits: false,
    _source: HIT_SOURCE,
    query: {
      bool: {
        filter: [{ term: { user_id: userId } }],
        should,
        minimum_should_match: 1,
      },
    },
  };
}

/** What every search reads of a passage (never its words or vectors). */
const HIT_SOURCE = ["file_id", "ord", "content", "locator"];

/** The request body (without index and routing) of passagesInRanges: exported for the tests' exact assertions. */
export function rangesBody(
  userId: string,
  ranges: readonly PassageRange[],
): Pick<estypes.SearchRequest, "size" | "track_total_hits" | "_source" | "query"> {
  return {
    size: ranges.reduce((n, r) => n + r.to - r.from + 1, 0),
    track_total_hits: false,
    _source: HIT_SOURCE,
    query: {
      bool: {
        filter: [{ term: { user_id: userId } }],
        should: ranges.map((r) => ({
          bool: { filter: [{ term: { file_id: r.fileId } }, { range: { ord: { gte: r.from, lte: r.to } } }] },
        })),
        minimum_should_match: 1,
      },
    },
  };
}

/**
 * The kNN search request body (without index and routing) for a query of at most `size` hits
 * (1 to 10,000): exported for the tests' exact assertions. `num_candidates`, the neighbours each
 * shard considers, is four times the hits wanted (at least 100, at most Elasticsearch's 10,000):
 * more candidates trade speed for recall.
 */
export function vectorSearchBody(
  query: Pick<VectorQuery, "userId" | "slot" | "space" | "vector">,
  size: number,
): Pick<estypes.SearchRequest, "size" | "track_total_hits" | "_source" | "knn"> {
  return {
    size,
    track_total_hits: false,
    _source: HIT_SOURCE,
    knn: {
      field: `${query.slot}_vector`,
      query_vector: Array.from(query.vector),
      k: size,
      num_candidates: Math.min(MAX_KNN_CANDIDATES, Math.max(100, size * 4)),
      filter: [{ term: { user_id: query.userId } }, { term: { [`${query.slot}_space`]: query.space } }],
    },
  };
}

/** A search's hits as PassageHits, in the cluster's order, each `_score` mapped by `score`. */
function hitsOf(response: estypes.SearchResponse<HitSource>, score: (raw: number) => number): PassageHit[] {
  return response.hits.hits.flatMap((hit) =>
    hit._source && hit._id !== undefined
      ? [
          {
            id: hit._id,
            fileId: hit._source.file_id,
            ord: hit._source.ord,
            content: hit._source.content,
            locator: hit._source.locator,
            score: score(hit._score ?? 0),
          },
        ]
      : [],
  );
}

/**
 * A vector that cosine similarity can use: not empty, finite, and not all zeros (its magnitude
 * would be 0, which Elasticsearch rejects for cosine; JSON would turn NaN and Infinity into null).
 */
function storable(vector: Float32Array): boolean {
  let nonZero = false;
  for (const value of vector) {
    if (!Number.isFinite(value)) return false;
    if (value !== 0) nonZero = true;
  }
  return nonZero;
}

/**
 * The id is the user, file and position: a redelivered replacement overwrites the same documents.
 * The user is part of it because `_id` is unique per shard only, and users share shards; each part
 * is URI-encoded so that no two (user, file) pairs can spell the same id.
 */
export const passageId = (file: FileRef, ord: number): string =>
  `${encodeURIComponent(file.userId)}:${encodeURIComponent(file.fileId)}:${ord}`;

/**
 * A passage's bulk lines. Each vector present goes in as plain numbers with its space; one that
 * cosine cannot use (all zeros, as a passage with no known word gets from the local embedder, or
 * not finite) is left out with its space, so the passage is indexed without a vector in that slot
 * instead of being rejected.
 */
function bulkItem(file: FileRef, ord: number, passage: IndexedPassage): BulkItem {
  const doc: PassageDocument = {
    user_id: file.userId,
    file_id: file.fileId,
    ord,
    content: passage.content,
    words: indexTerms(passage.content).join(" "),
    locator: passage.locator,
  };
  for (const slot of VECTOR_SLOTS) {
    const given = passage.vectors?.[slot];
    if (!given || !storable(given.vector)) continue;
    doc[`${slot}_vector`] = Array.from(given.vector);
    doc[`${slot}_space`] = given.space;
  }
  const action = JSON.stringify({ index: { _id: passageId(file, ord), routing: file.userId } });
  const document = JSON.stringify(doc);
  return { action, document, bytes: Buffer.byteLength(action) + Buffer.byteLength(document) + 2 };
}

function clientOptions(options: ElasticsearchSearchIndexOptions): ClientOptions {
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

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer.`);
  return value;
}

/**
 * Back to the cluster's default refresh (null resets a setting; the client's types have no null),
 * which also keeps Elasticsearch's search-idle optimisation that an explicit "1s" would turn off.
 */
const RESET_REFRESH_INTERVAL = { refresh_interval: null } as unknown as estypes.IndicesIndexSettings;

/** Statuses that mean "not now": a full queue (429) or a shard or node not ready (503). */
const RETRYABLE = new Set([429, 503]);

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

interface ResponseErrorLike {
  name: "ResponseError";
  statusCode: number;
  body?: unknown;
}

// By name rather than instanceof: the client's errors may come from another copy of
// @elastic/transport (a mock's), and names are what its own retry logic switches on.
function isResponseError(err: unknown): err is ResponseErrorLike {
  return (
    typeof err === "object" &&
    err !== null &&
    (err as { name?: unknown }).name === "ResponseError" &&
    typeof (err as { statusCode?: unknown }).statusCode === "number"
  );
}

function errorType(err: unknown): string | undefined {
  if (!isResponseError(err)) return undefined;
  const body = err.body as { error?: { type?: unknown } } | undefined;
  return typeof body?.error?.type === "string" ? body.error.type : undefined;
}

const DOWN_ERRORS = new Set(["TimeoutError", "ConnectionError", "NoLivingConnectionsError"]);

/**
 * A cluster that does not answer in time, cannot be reached, or is overloaded is an operational
 * state (503, retried by workers), not a bug. Other errors (a rejected mapping, bad credentials)
 * pass through unchanged.
 */
function unavailableIfDown(err: unknown): unknown {
  if (err instanceof LocusError || typeof err !== "object" || err === null) return err;
  const name = (err as { name?: unknown }).name;
  const down =
    (typeof name === "string" && DOWN_ERRORS.has(name)) ||
    (isResponseError(err) && [429, 502, 503, 504].includes(err.statusCode));
  return down ? new LocusError("unavailable", UNAVAILABLE, { cause: err }) : err;
}
