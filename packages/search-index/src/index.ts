export * from "./search-index.ts";
export { SqliteSearchIndex } from "./sqlite-search-index.ts";
export { PostgresSearchIndex, type PostgresSearchIndexOptions } from "./postgres-search-index.ts";
export {
  ELASTICSEARCH_MAPPING_VERSION,
  ElasticsearchSearchIndex,
  passageIndexBody,
  type ElasticsearchSearchIndexOptions,
} from "./elasticsearch-search-index.ts";
