// Writing passages: each one's bulk lines, bulk requests bounded in count and size and retried
// while the cluster says "not now", and deletes by query.
//
// Why not the client's `helpers.bulk`: it reports an item rejected for good (a mapping error)
// through `onDrop` and goes on, where a replacement must fail with that reason; it retries rejected
// items after one fixed wait without jitter; and it refreshes with a separate refresh call at the
// end, where the last request here carries `refresh: wait_for`. Each of these is a tested promise.

import type { Client, estypes } from "@elastic/elasticsearch";
import { LocusError } from "@locus/contracts";
import { backoffDelay } from "@locus/runtime";
import { indexTerms, type FileRef, type IndexedPassage, type VectorSlot } from "./search-index.ts";
import type { StoredAttributes } from "./file-filter.ts";
import { storable, VECTOR_SLOTS, type PassageDocument } from "./elasticsearch-index-mapping.ts";
import { RETRYABLE, UNAVAILABLE, isResponseError } from "./elasticsearch-errors.ts";

/** Elasticsearch advises bulk requests of a few MB; far below `http.max_content_length` (100 MB). */
const BATCH_BYTES = 5 * 1024 * 1024;
const RETRY_CAP_MS = 5_000;

/** One passage ready for a bulk request: its action and document lines, already serialised. */
export interface BulkItem {
  action: string;
  document: string;
  bytes: number;
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
 * not finite), or of another size than its slot's mapping, is left out with its space, so the
 * passage is indexed without a vector in that slot instead of being rejected.
 */
export function bulkItem(
  file: FileRef,
  ord: number,
  passage: IndexedPassage,
  attributes?: StoredAttributes,
  /** Each slot's mapped dimensions, where known: a vector of another size is left out, not refused. */
  dims: Partial<Record<VectorSlot, number>> = {},
): BulkItem {
  const doc: PassageDocument = {
    user_id: file.userId,
    file_id: file.fileId,
    ord,
    content: passage.content,
    words: indexTerms(passage.content).join(" "),
    locator: passage.locator,
    ...(attributes ? attributeFields(attributes) : {}),
  };
  for (const slot of VECTOR_SLOTS) {
    const given = passage.vectors?.[slot];
    if (!given || !storable(given.vector)) continue;
    // Another engine's vector (the word vectors', when the sentence encoder could not load): the
    // passage is still found by its words, and its vector could never meet a question of that size.
    const mapped = dims[slot];
    if (mapped !== undefined && given.vector.length !== mapped) continue;
    doc[`${slot}_vector`] = Array.from(given.vector);
    doc[`${slot}_space`] = given.space;
  }
  const action = JSON.stringify({ index: { _id: passageId(file, ord), routing: file.userId } });
  const document = JSON.stringify(doc);
  return { action, document, bytes: Buffer.byteLength(action) + Buffer.byteLength(document) + 2 };
}

/** A file's attributes as fields of each of its passages (see passageIndexBody). */
export function attributeFields(
  attributes: StoredAttributes,
): Pick<PassageDocument, "file_type" | "file_created_at" | "metadata"> {
  // A Map, not an object: a key such as `constructor` is a valid metadata key.
  const metadata = new Map<string, string[]>();
  for (const [key, value] of attributes.terms) {
    const values = metadata.get(key);
    if (values) values.push(value);
    else metadata.set(key, [value]);
  }
  return {
    file_type: attributes.fileType,
    file_created_at: attributes.createdAt,
    metadata: Object.fromEntries(
      [...metadata].map(([key, values]) => [key, values.length === 1 ? values[0]! : values]),
    ),
  };
}

/** Elasticsearch refused a field its index's (strict, older) mapping does not have. */
export class OlderMappingError extends Error {
  override readonly name = "OlderMappingError";
}

/** What the writer needs of the adapter: its client and alias, its bulk settings, and its failure. */
export interface PassageWriterSettings {
  client: Client;
  alias: string;
  batchSize: number;
  maxAttempts: number;
  retryDelayMs: number;
  /** What a failed request throws (the adapter's own `failure`, which notices a vanished alias). */
  failure: (err: unknown) => unknown;
}

/** Writes passages into an index: bounded bulk requests with their retries, and deletes by query. */
export class PassageWriter {
  private readonly client: Client;
  private readonly alias: string;
  private readonly batchSize: number;
  private readonly maxAttempts: number;
  private readonly retryDelayMs: number;
  private readonly failure: (err: unknown) => unknown;
  /** The cluster has no `_delete_by_query` (see deleteBySearch): found on the first delete. */
  private noDeleteByQuery = false;

  constructor(settings: PassageWriterSettings) {
    this.client = settings.client;
    this.alias = settings.alias;
    this.batchSize = settings.batchSize;
    this.maxAttempts = settings.maxAttempts;
    this.retryDelayMs = settings.retryDelayMs;
    this.failure = settings.failure;
  }

  /**
   * Collects bulk items into requests of at most `bulkBatchSize` passages and about 5 MB. A
   * request is sent when the next item would overflow it, so the last one (sent by `flush`) always
   * holds at least one passage and can carry a refresh.
   */
  batches(index: string): {
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
            const message = `Elasticsearch rejected passage ${result._id ?? item.action} (${result.status} ${type}): ${reason ?? "no reason given"}`;
            // The alias still points at an index of an older mapping, which lacks a field this
            // version writes (its mapping is strict): only a rebuild moves it to the new one.
            if (type === "strict_dynamic_mapping_exception") {
              throw new OlderMappingError(
                `${message} (the index behind ${this.alias} has an older mapping than this Locus writes: run \`pnpm locus index rebuild\`)`,
              );
            }
            // The index was made for another engine's vectors (the word vectors' 100 dimensions, say,
            // before the sentence encoder's 384): only a rebuild makes it with this engine's size.
            if (/_vector\b.*different number of dimensions/.test(reason ?? "")) {
              throw new Error(
                `${message} (the index behind ${this.alias} was made for vectors of another engine: run \`pnpm locus index rebuild\`)`,
              );
            }
            throw new Error(message);
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

  /**
   * Deletes the file's passages (those matching `also` too, when given), in the user's shard:
   * by `_delete_by_query`, or, on a cluster without the module that serves it, by search and
   * bulk delete (see deleteBySearch).
   */
  async deleteByQuery(
    file: FileRef,
    also: estypes.QueryDslQueryContainer | undefined,
    refresh: boolean,
  ): Promise<void> {
    const query: estypes.QueryDslQueryContainer = {
      bool: {
        filter: [
          { term: { user_id: file.userId } },
          { term: { file_id: file.fileId } },
          ...(also ? [also] : []),
        ],
      },
    };
    if (this.noDeleteByQuery) return this.deleteBySearch(file, query, refresh);
    try {
      const response = await this.client.deleteByQuery({
        index: this.alias,
        routing: file.userId,
        refresh,
        // A passage rewritten while the delete runs (a redelivery) is skipped, not an error.
        conflicts: "proceed",
        query,
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
      if (!lacksHandler(err)) throw this.failure(err);
      this.noDeleteByQuery = true;
      await this.deleteBySearch(file, query, refresh);
    }
  }

  /**
   * `_delete_by_query` is served by Elasticsearch's `reindex` module, which a cluster may lack
   * (the distribution Elastic publishes on Maven Central, which Locus's test node runs, has not
   * got it): the same deletion by searching the matching ids, a page at a time, and deleting them
   * in bulk. Each full page is refreshed away before the next search, which sees only what a
   * refresh has shown, as `_delete_by_query` does.
   */
  private async deleteBySearch(
    file: FileRef,
    query: estypes.QueryDslQueryContainer,
    refresh: boolean,
  ): Promise<void> {
    try {
      for (;;) {
        const found = await this.client.search({
          index: this.alias,
          routing: file.userId,
          size: DELETE_PAGE,
          _source: false,
          query,
        });
        const ids = found.hits.hits.flatMap((hit) => (hit._id === undefined ? [] : [hit._id]));
        if (ids.length === 0) return;
        const more = ids.length === DELETE_PAGE;
        const response = await this.client.bulk({
          index: this.alias,
          refresh: more || refresh,
          operations: ids.map((id) => ({ delete: { _id: id, routing: file.userId } })),
        });
        // A passage already gone (404) is what was wanted.
        const failed = response.items.find((item) => {
          const status = item.delete?.status ?? 500;
          return status >= 300 && status !== 404;
        })?.delete;
        if (failed) {
          const cause = new Error(
            `bulk delete failed for a passage (${failed.status}): ${failed.error?.reason ?? failed.error?.type ?? "unknown"}`,
          );
          if (RETRYABLE.has(failed.status)) throw new LocusError("unavailable", UNAVAILABLE, { cause });
          throw cause;
        }
        if (!more) return;
      }
    } catch (err) {
      throw this.failure(err);
    }
  }
}

/** Passages deleted per search and bulk request where `_delete_by_query` is missing. */
const DELETE_PAGE = 1000;

/** The cluster has no handler for the request's path: a module (here `reindex`) is not installed. */
function lacksHandler(err: unknown): boolean {
  if (!isResponseError(err) || ![400, 404, 405].includes(err.statusCode)) return false;
  const body = err.body as { error?: unknown } | undefined;
  return typeof body?.error === "string" && body.error.startsWith("no handler found for uri");
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
