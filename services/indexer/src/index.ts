export { fileAttributes, PassageIndexer, type IndexerObserver } from "./passage-indexer.ts";
export { startIndexerModule, type IndexerDeps } from "./indexer-module.ts";
export { withVectors, type EmbedOptions, type PassageEmbedders } from "./passage-vectors.ts";
