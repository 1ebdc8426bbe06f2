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
export { PostgresSearchIndex, SqliteSearchIndex, type SearchIndex } from "@locus/search-index";
export {
  createPostgresMetadataStore,
  createSqliteMetadataStore,
  type FileRecord,
  type MetadataStore,
} from "@locus/metadata-store";
