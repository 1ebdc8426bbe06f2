/** The product pieces the benchmarks drive, in one place. */
export {
  client,
  createUserWithKey,
  makePdf,
  makeScannedPdf,
  makeTextImage,
  makeVideo,
  metricValue,
  scrapeMetrics,
  encodeAudio,
  recording,
  speak,
  speechClips,
  wav16k,
  wordErrors,
  removeDataDir,
  PARAPHRASES,
  PARAPHRASES_DEV,
  seededRandom,
  type TextImageSpec,
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
  type IndexedPassage,
  type PassageHit,
  type SearchIndex,
} from "@locus/search-index";
/** The OCR library the image extractor runs, for throughput and accuracy without the server around it. */
export {
  createOcrEngine,
  DEFAULT_OCR_PASSAGE_OPTIONS,
  estimateLean,
  estimateLineHeight,
  extractImage,
  findTesseract,
  installedLanguages,
  medianLineHeight,
  openImage,
  readPgm,
  type OcrEngine,
  type OcrEngineKind,
  type OcrModelSource,
} from "@locus/ocr-reader";
/** The media pieces the audio and video extractors run. */
export { transcribeRecording, transcriptOf } from "@locus/media-reader";
export { MoonshineSpeechToText, PocketsphinxSpeechToText, type SpeechToText } from "@locus/speech-to-text";
export { readVideo } from "@locus/extractor-media";
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
/** ai mode's local engine and the indexer's embedding step, to write datasets with vectors. */
export { LocalEmbedder, SentenceEncoder, type Embedder } from "@locus/embedder";
/** The engine a server uses when LOCUS_EMBEDDER is unset, which a benchmark's own vectors must match. */
export { DEFAULT_EMBEDDER } from "@locus/runtime";
export { withVectors } from "@locus/indexer";
/** How the extractors cut a page into passages, for the real-text corpus (bench/corpus/real-text.ts). */
export { joinWindow, windowLines, type NumberedLine } from "@locus/passages";
/** ai mode's fusion of the keyword and vector lists, for bench/ai/ai-tune.ts (no server there). */
export { rankAi } from "../../services/search/src/hybrid-ranking.ts";
/** Office documents to PDF as the document extractor converts them. */
export {
  DEFAULT_OFFICE_MEMORY_MB,
  inspectOfficeDocument,
  OfficeConverter,
  type OfficeFormat,
} from "@locus/office-converter";
/** Words as every index sees them, and the stop words queries drop: to compare summaries with answers. */
export { isStopWord, words } from "@locus/passages";
