import { Client } from "@elastic/elasticsearch";
import {
  boundedRanges,
  inRangeOrder,
  normaliseScore,
  queryTerms,
  type FilePassages,
  type FileRef,
  type IndexedFile,
  type IndexedPassage,
  type PassageHit,
  type PassageRange,
  type SearchIndex,
  type VectorQuery,
  type VectorSlot,
} from "./search-index.ts";
import {
  DEFAULT_LOCAL_DIMS,
  ELASTICSEARCH_MAPPING_VERSION,
  VECTOR_SLOTS,
  passageIndexBody,
  storable,
} from "./elasticsearch-index-mapping.ts";
import {
  clientOptions,
  positiveInteger,
  type ElasticsearchSearchIndexOptions,
} from "./elasticsearch-options.ts";
import { VersionedIndex } from "./elasticsearch-versioned-index.ts";
import { OlderMappingError, PassageWriter, bulkItem } from "./elasticsearch-passage-writer.ts";
import {
  MAX_KNN_CANDIDATES,
  MAX_RESULT_WINDOW,
  hitsOf,
  rangesBody,
  searchBody,
  vectorSearchBody,
  type HitSource,
} from "./elasticsearch-queries.ts";
import { errorType, unavailableIfDown } from "./elasticsearch-errors.ts";
import { LocusError, type FileFilter } from "@locus/contracts";
import { filterConditions, storedAttributes } from "./file-filter.ts";

export { ELASTICSEARCH_MAPPING_VERSION, passageIndexBody } from "./elasticsearch-index-mapping.ts";
export type { ElasticsearchSearchIndexOptions } from "./elasticsearch-options.ts";

const DEFAULT_PREFIX = "locus-passages";
const DEFAULT_BATCH = 500;
/** Index names: lower case, no characters Elasticsearch forbids, no leading `-`, `_` or `+`. */
const PREFIX_PATTERN = /^[a-z0-9][a-z0-9._-]{0,200}$/;

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
 * - Filters: each passage carries its file's attributes (file_type, file_created_at, metadata),
 *   and a search's FileFilter becomes unscored clauses in the same query (filterClauses): in
 *   `bool.filter` for keywords, in the kNN search's own `filter` for vectors.
 * - Versioned index behind an alias: reads and writes go to the alias `<prefix>`; the physical index
 *   is `<prefix>-v<N>` (N = ELASTICSEARCH_MAPPING_VERSION) and `rebuild()` swaps in a new one.
 * - Unreachable, timing out or overloaded clusters surface as LocusError("unavailable") (503 at
 *   the HTTP layer, a retry for workers); a request never waits longer than `requestTimeoutMs`.
 */
export class ElasticsearchSearchIndex implements SearchIndex {
  private readonly client: Client;
  private readonly alias: string;
  /** Dimensions each slot's vectors must have, where known (remote's may be left to the cluster). */
  private readonly dims: Partial<Record<VectorSlot, number>>;
  private readonly writer: PassageWriter;
  private readonly versioned: VersionedIndex;
  /** The live index refused the file attribute fields (see replaceFilePassages); a rebuild ends it. */
  private olderMapping = false;
  /** When attributesAccepted last asked where the alias points (ms since the epoch). */
  private mappingCheckedAt = 0;
  private readonly mappingRecheckMs: number;
  private ready: Promise<void> | undefined;
  private closed = false;

  constructor(options: ElasticsearchSearchIndexOptions) {
    this.alias = options.indexPrefix ?? DEFAULT_PREFIX;
    this.mappingRecheckMs = options.mappingRecheckMs ?? 30_000;
    if (!PREFIX_PATTERN.test(this.alias)) {
      throw new Error(
        `Elasticsearch index prefix ${JSON.stringify(this.alias)} must be lower-case letters, digits, '.', '_' and '-', starting with a letter or digit.`,
      );
    }
    const batchSize = positiveInteger("bulkBatchSize", options.bulkBatchSize ?? DEFAULT_BATCH);
    const maxAttempts = positiveInteger("bulkMaxAttempts", options.bulkMaxAttempts ?? 6);
    const retryDelayMs = options.bulkRetryDelayMs ?? 250;
    const local = positiveInteger("localVectorDims", options.localVectorDims ?? DEFAULT_LOCAL_DIMS);
    const remote =
      options.remoteVectorDims === undefined
        ? undefined
        : positiveInteger("remoteVectorDims", options.remoteVectorDims);
    this.dims = { local, ...(remote !== undefined ? { remote } : {}) };
    const body = passageIndexBody({ ...options, localVectorDims: local, remoteVectorDims: remote });
    this.client = options.client ?? new Client(clientOptions(options));
    this.writer = new PassageWriter({
      client: this.client,
      alias: this.alias,
      batchSize,
      maxAttempts,
      retryDelayMs,
      failure: (err) => this.failure(err),
    });
    this.versioned = new VersionedIndex(this.client, this.alias, body, this.writer, this.dims);
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
    await this.versioned.ensure({});
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
  async replaceFilePassages(file: IndexedFile, passages: AsyncIterable<IndexedPassage>): Promise<number> {
    await this.whenReady();
    // Behind the alias until a rebuild: an index of an older mapping, which refuses the fields.
    const attributes = (await this.attributesAccepted()) ? storedAttributes(file) : undefined;
    const batches = this.writer.batches(this.alias);
    let count = 0;
    try {
      for await (const passage of passages) {
        await batches.add(bulkItem(file, count, passage, attributes, this.dims));
        count += 1;
      }
      await this.writer.deleteByQuery(file, { range: { ord: { gte: count } } }, count === 0);
      await batches.flush(true);
    } catch (err) {
      if (!(err instanceof OlderMappingError) || !attributes) throw err;
      // Deployed before `pnpm locus index rebuild`: from now on files are written without the
      // attributes (unfiltered searches find them; filters once the rebuild has given them theirs),
      // and this one is tried again by its message's retry rather than failed.
      this.olderMapping = true;
      this.mappingCheckedAt = Date.now();
      throw new LocusError(
        "unavailable",
        "The search index has an older mapping: files are indexed without their filter attributes until `pnpm locus index rebuild`.",
        { cause: err },
      );
    }
    return count;
  }

  async deleteFilePassages(file: FileRef): Promise<void> {
    await this.whenReady();
    await this.writer.deleteByQuery(file, undefined, true);
  }

  /**
   * Any of the query's terms (`queryTerms`: stop words dropped unless that leaves none), best
   * first by BM25: one `match` on `words`, as SQLite and Postgres rank any of the terms.
   *
   * A filter is part of the query (`bool.filter`, see filterClauses), so it runs before the best
   * `limit` are taken.
   *
   * No highlighting is requested: neither PassageHit nor the public search API (fixed at 1.0.0) has
   * a place for it, and highlighting costs work on every hit. It needs a port change first; the
   * mapping would then index `content` for it (a mapping version bump and a rebuild).
   */
  async search(query: {
    userId: string;
    text: string;
    limit: number;
    filter?: FileFilter;
  }): Promise<PassageHit[]> {
    const terms = queryTerms(query.text);
    const size = Math.min(MAX_RESULT_WINDOW, Math.max(0, Math.floor(query.limit)));
    const conditions = filterConditions(query.filter);
    if (terms.length === 0 || size === 0 || conditions?.matchesNothing) return [];
    await this.whenReady();
    try {
      const response = await this.client.search<HitSource>({
        index: this.alias,
        routing: query.userId,
        ...searchBody(query.userId, terms, size, conditions),
      });
      return hitsOf(response, normaliseScore);
    } catch (err) {
      throw this.failure(err);
    }
  }

  /**
   * One approximate kNN search (HNSW) of the slot's field, routed to the user's shard and filtered
   * (inside the kNN search, so `k` counts only matching passages) on the user and the query's
   * space, and the query's file filter. Elasticsearch's cosine `_score` is (1 + cos) / 2; hits carry cos, negatives as 0.
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
    const conditions = filterConditions(query.filter);
    if (conditions?.matchesNothing) return [];
    await this.whenReady();
    try {
      const response = await this.client.search<HitSource>({
        index: this.alias,
        routing: userId,
        ...vectorSearchBody(query, size, conditions),
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
    await this.versioned.ensure({ maxRetries: 0 });
    this.ready ??= Promise.resolve();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.client.close();
  }

  /** Zero-downtime reindex into a fresh index behind the alias (VersionedIndex.rebuild says how). */
  async rebuild(source: AsyncIterable<FilePassages>): Promise<{ files: number; passages: number }> {
    return this.versioned.rebuild(source, () => {
      this.ready = Promise.resolve();
      this.olderMapping = false;
    });
  }

  /**
   * What a failed read or write throws. An alias that has gone (an operator deleted it) makes the
   * next call run ensureIndex again instead of failing until the process restarts.
   */
  private failure(err: unknown): unknown {
    if (errorType(err) === "index_not_found_exception") this.ready = undefined;
    return unavailableIfDown(err);
  }

  /**
   * Whether the live index takes the attribute fields. After a refusal, not until the alias points
   * at indexes of the current mapping version only: looked up at most every mappingRecheckMs, so a
   * rebuild another process ran is noticed without a request on every write meanwhile.
   */
  private async attributesAccepted(): Promise<boolean> {
    if (!this.olderMapping) return true;
    if (Date.now() - this.mappingCheckedAt < this.mappingRecheckMs) return false;
    this.mappingCheckedAt = Date.now();
    try {
      const indexes = Object.keys(await this.client.indices.getAlias({ name: this.alias }));
      const current = (index: string) => {
        const m = /^-v(\d+)(?:-\d+)?$/.exec(index.slice(this.alias.length));
        return index.startsWith(this.alias) && m !== null && Number(m[1]) >= ELASTICSEARCH_MAPPING_VERSION;
      };
      if (indexes.length > 0 && indexes.every(current)) this.olderMapping = false;
    } catch {
      // Not known now: written without the attributes, as before; asked again later.
    }
    return !this.olderMapping;
  }

  /** ensureIndex once per instance; a failure (cluster down) is retried on the next call. */
  private whenReady(): Promise<void> {
    this.ready ??= this.ensureIndex().catch((err: unknown) => {
      this.ready = undefined;
      throw err;
    });
    return this.ready;
  }
}
