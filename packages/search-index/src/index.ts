export * from "./search-index.ts";
export { SqliteSearchIndex, type SqliteSearchIndexOptions } from "./sqlite-search-index.ts";
export {
  VectorCache,
  VectorMatrix,
  vectorBytes,
  type VectorCacheObserver,
  type VectorSearchOptions,
} from "./vector-matrix.ts";
export {
  PostgresSearchIndex,
  type PostgresSearchIndexOptions,
  type PostingsLoaded,
} from "./postgres-search-index.ts";
export {
  ELASTICSEARCH_MAPPING_VERSION,
  ElasticsearchSearchIndex,
  passageIndexBody,
  type ElasticsearchSearchIndexOptions,
} from "./elasticsearch-search-index.ts";
