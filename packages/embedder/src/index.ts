export {
  dot,
  EmbedderError,
  isZero,
  normalise,
  remoteFailure,
  type Embedder,
  type TextKind,
  type VectorMatching,
} from "./embedder.ts";
export {
  DEFAULT_WORD_VECTORS_PATH,
  LocalEmbedder,
  loadWordVectors,
  type LocalEmbedderOptions,
} from "./local-embedder.ts";
export { OpenAiEmbedder, type OpenAiEmbedderOptions } from "./openai-embedder.ts";
export { convertWinkEmbeddings, WordVectors } from "./word-vectors.ts";
export { loadLexicon } from "./lexicon.ts";
export { SentenceEncoder, type SentenceEncoderOptions } from "./sentence-encoder.ts";
export {
  DEFAULT_MAVEN_REPOSITORY,
  DEFAULT_MODELS_DIR,
  fetchSentenceModel,
  JUDGE_MODEL,
  ModelUnavailableError,
  readSentenceModel,
  SENTENCE_MODEL,
  SENTENCE_MODELS,
  type SentenceModel,
} from "./sentence-model.ts";
