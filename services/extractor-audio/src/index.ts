export { startExtractorAudioModule, type ExtractorAudioDeps } from "./extractor-audio-module.ts";
