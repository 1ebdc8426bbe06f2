// The request bodies of the three searches (terms, ranges, kNN) and how their hits become PassageHits.

import type { estypes } from "@elastic/elasticsearch";
import type { PassageHit, PassageRange, VectorQuery } from "./search-index.ts";
import type { PassageDocument } from "./elasticsearch-index-mapping.ts";
import type { FilterConditions } from "./file-filter.ts";

export type HitSource = Pick<PassageDocument, "file_id" | "ord" | "content" | "locator">;

/** `index.max_result_window`: a larger `size` is an error, not a longer list. */
export const MAX_RESULT_WINDOW = 10_000;
/** Elasticsearch's ceiling for `k` and `num_candidates` of a kNN search. */
export const MAX_KNN_CANDIDATES = 10_000;
/**
 * How many more neighbours than asked for a kNN search gathers by their quantised vectors before it
 * scores them again with the stored float vectors (`rescore_vector`, Elasticsearch 8.18 and
 * later). Elasticsearch 8.14+ quantises a `dense_vector` to int8 in its HNSW graph by default
 * (`int8_hnsw`, a quarter of the memory), and without a rescore the cosines it returns are the
 * quantised ones: an orthogonal vector scored 0.0026 instead of 0 on a real node, and two close
 * passages can swap. Rescored, the hits and their order are those of exact cosines over the
 * gathered candidates, as SQLite and PostgreSQL give. Twice `k` costs a second pass over at most
 * 2k float vectors, read from disk only for those.
 */
export const KNN_RESCORE_OVERSAMPLE = 2;

/**
 * A file filter as unscored clauses on the passage's file fields (see passageIndexBody): ids and
 * types as `terms`, the exclusive bounds as one `range`, each metadata condition as a `term` on
 * the flattened field's subfield. A passage whose file was indexed without attributes has none of
 * those fields, so it passes no clause but the ids'.
 */
export function filterClauses(conditions: FilterConditions | undefined): estypes.QueryDslQueryContainer[] {
  if (!conditions) return [];
  const clauses: estypes.QueryDslQueryContainer[] = [];
  if (conditions.fileIds) clauses.push({ terms: { file_id: conditions.fileIds } });
  if (conditions.fileTypes) clauses.push({ terms: { file_type: conditions.fileTypes } });
  if (conditions.createdAfter !== undefined || conditions.createdBefore !== undefined) {
    clauses.push({
      range: {
        file_created_at: {
          ...(conditions.createdAfter !== undefined ? { gt: conditions.createdAfter } : {}),
          ...(conditions.createdBefore !== undefined ? { lt: conditions.createdBefore } : {}),
        },
      },
    });
  }
  for (const [key, value] of conditions.metadata) clauses.push({ term: { [`metadata.${key}`]: value } });
  return clauses;
}

/** The search request body (without index and routing): exported for the tests' exact assertions. */
export function searchBody(
  userId: string,
  terms: readonly string[],
  size: number,
  conditions?: FilterConditions,
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
        filter: [{ term: { user_id: userId } }, ...filterClauses(conditions)],
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
 * (1 to 10,000), of passages that pass the file filter: exported for the tests' exact
 * assertions. `num_candidates`, the neighbours each shard considers, is four times the hits wanted
 * (at least 100, at most Elasticsearch's 10,000): more candidates trade speed for recall. The
 * hits are rescored with the float vectors (see KNN_RESCORE_OVERSAMPLE).
 */
export function vectorSearchBody(
  query: Pick<VectorQuery, "userId" | "slot" | "space" | "vector">,
  size: number,
  conditions?: FilterConditions,
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
      rescore_vector: { oversample: KNN_RESCORE_OVERSAMPLE },
      // Inside the kNN search: HNSW looks for the nearest among passages that pass, so `k` counts
      // only those (a filter applied to the hits afterwards would leave fewer than `k`).
      filter: [
        { term: { user_id: query.userId } },
        { term: { [`${query.slot}_space`]: query.space } },
        ...filterClauses(conditions),
      ],
    },
  };
}

/** A search's hits as PassageHits, in the cluster's order, each `_score` mapped by `score`. */
export function hitsOf(
  response: estypes.SearchResponse<HitSource>,
  score: (raw: number) => number,
): PassageHit[] {
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
