export { alignWords, OpenAiSpeechToText, type OpenAiSpeechOptions } from "./openai-speech-to-text.ts";
export {
  DEFAULT_POCKETSPHINX_MODEL_DIR,
  dictionaryForms,
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
  type WordAligner,
  type WordTime,
} from "./speech-to-text.ts";
export { ObservedSpeechToText, type SpeechObserver } from "./observed-speech-to-text.ts";
export { FRAME_BYTES, FRAME_S, frameRms, QUIET_RMS } from "./pcm.ts";
export {
  DEFAULT_PYPI_FILES,
  DEFAULT_SPEECH_MODEL_DIR,
  MOONSHINE_MODEL,
  moonshineInstalled,
  prepareMoonshineModel,
  readMoonshineModel,
} from "./moonshine/moonshine-model.ts";
export { MoonshineSpeechToText, type MoonshineOptions } from "./moonshine/moonshine-speech-to-text.ts";
export { ortToOnnx, OrtFormatError } from "./moonshine/ort-to-onnx.ts";
