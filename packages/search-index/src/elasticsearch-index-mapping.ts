// What a passage index is: its mapping version, settings and mappings, and the shape of the
// document each passage is stored as.

import type { estypes } from "@elastic/elasticsearch";
import type { Locator } from "@locus/contracts";
import type { VectorSlot } from "./search-index.ts";
import { BM25_B, BM25_K1 } from "./bm25.ts";

/**
 * Version of the mapping and analysis below. Bump it with any change to them: the physical index is
 * `<prefix>-v<N>`, and a deployment moves to a new version with `rebuild()` (a fresh index, loaded
 * from stored extractions, swapped in behind the alias), never by editing a live mapping. What
 * each version changed: docs/decisions/001-elasticsearch-passage-index.md.
 */
export const ELASTICSEARCH_MAPPING_VERSION = 4;

export const VECTOR_SLOTS: readonly VectorSlot[] = ["local", "remote"];
export const DEFAULT_LOCAL_DIMS = 100;

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
 * stop-word policy, and a query of only stop words must match.
 * - `content`: the passage as given, returned verbatim, not indexed: a second inverted index of
 *   the same text would double the index for nothing a search uses (see `search` on highlighting).
 * - `locator`: typed for range queries and sorting later; `bbox` is kept in `_source` only.
 * - `file_type` (keyword), `file_created_at` (date) and `metadata` (flattened): the passage's
 *   file's attributes (IndexedFile), on every passage of the file, for a search's filter
 *   (`bool.filter` of the keyword query, `filter` of the kNN search). `metadata` holds the file's
 *   metadata as filters compare it (metadataTerms: numbers and booleans as their strings, a list
 *   as an array), so `metadata.<key>` is a keyword subfield for `term` queries; flattened maps
 *   every key as one field, so no user's keys can grow the mapping. A file indexed without
 *   attributes has none of the three, and only filters on file ids alone find it.
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
        file_type: { type: "keyword" },
        file_created_at: { type: "date" },
        metadata: { type: "flattened" },
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

/**
 * A vector that cosine similarity can use: not empty, finite, and not all zeros (its magnitude
 * would be 0, which Elasticsearch rejects for cosine; JSON would turn NaN and Infinity into null).
 */
export function storable(vector: Float32Array): boolean {
  let nonZero = false;
  for (const value of vector) {
    if (!Number.isFinite(value)) return false;
    if (value !== 0) nonZero = true;
  }
  return nonZero;
}

/**
 * Back to the cluster's default refresh (null resets a setting; the client's types have no null),
 * which also keeps Elasticsearch's search-idle optimisation that an explicit "1s" would turn off.
 */
export const RESET_REFRESH_INTERVAL = { refresh_interval: null } as unknown as estypes.IndicesIndexSettings;

/** What one passage is stored as. */
export interface PassageDocument {
  user_id: string;
  file_id: string;
  ord: number;
  content: string;
  words: string;
  locator: Locator;
  /** The file's attributes, when it was indexed with them (see passageIndexBody). */
  file_type?: string;
  file_created_at?: string;
  metadata?: Record<string, string | string[]>;
  /** Per slot present: the vector as plain numbers, and its space (see PassageVectors). */
  local_vector?: number[];
  local_space?: string;
  remote_vector?: number[];
  remote_space?: string;
}
