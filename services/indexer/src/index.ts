export { PassageIndexer, readExtraction } from "./passage-indexer.ts";
export { startIndexerModule, type IndexerDeps } from "./indexer-module.ts";
