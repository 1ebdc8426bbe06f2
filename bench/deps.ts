/** The product pieces the benchmarks drive, in one place. */
export {
  client,
  createUserWithKey,
  makePdf,
  removeDataDir,
  startLocus,
  startSplitStack,
  tempDataDir,
  type Client,
  type LocusProcess,
  type SplitStack,
} from "@locus/testing";
export {
  ElasticsearchSearchIndex,
  PostgresSearchIndex,
  SqliteSearchIndex,
  type ElasticsearchSearchIndexOptions,
  type SearchIndex,
} from "@locus/search-index";
/** The official client, for the Elasticsearch benchmark's own calls (cluster info, index stats, cleanup). */
export {
  BaseConnection,
  Client as EsClient,
  type ClientOptions as EsClientOptions,
  type ConnectionRequestOptions,
  type ConnectionRequestOptionsAsStream,
  type ConnectionRequestParams,
  type ConnectionRequestResponse,
  type ConnectionRequestResponseAsStream,
  type estypes,
} from "@elastic/elasticsearch";
export {
  createPostgresMetadataStore,
  createSqliteMetadataStore,
  type FileRecord,
  type MetadataStore,
} from "@locus/metadata-store";
