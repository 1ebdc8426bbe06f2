export { startExtractorAudioModule, type ExtractorAudioDeps } from "./extractor-audio-module.ts";
export { transcribeRecording, type TranscribeOptions } from "./transcribe-recording.ts";
