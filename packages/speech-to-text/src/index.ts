export { alignWords, OpenAiSpeechToText, type OpenAiSpeechOptions } from "./openai-speech-to-text.ts";
export {
  DEFAULT_POCKETSPHINX_MODEL_DIR,
  parseTimedOutput,
  PocketsphinxSpeechToText,
  type PocketsphinxOptions,
} from "./pocketsphinx.ts";
export {
  PCM_BYTES_PER_SECOND,
  SpeechEngineError,
  wavFile,
  type ChunkOptions,
  type SpeechSegment,
  type SpeechToText,
} from "./speech-to-text.ts";
export { ObservedSpeechToText, type SpeechObserver } from "./observed-speech-to-text.ts";
