/** The product pieces the benchmarks drive, in one place. */
export {
  client,
  createUserWithKey,
  makePdf,
  removeDataDir,
  startLocus,
  tempDataDir,
  type Client,
  type LocusProcess,
} from "@locus/testing";
export { SqliteSearchIndex } from "@locus/search-index";
export { createSqliteMetadataStore, type FileRecord } from "@locus/metadata-store";
