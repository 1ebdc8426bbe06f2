export { dot, EmbedderError, isZero, normalise, remoteFailure, type Embedder } from "./embedder.ts";
export {
  DEFAULT_WORD_VECTORS_PATH,
  LocalEmbedder,
  loadWordVectors,
  type LocalEmbedderOptions,
} from "./local-embedder.ts";
export { OpenAiEmbedder, type OpenAiEmbedderOptions } from "./openai-embedder.ts";
export { convertWinkEmbeddings, WordVectors } from "./word-vectors.ts";
export { loadLexicon } from "./lexicon.ts";
