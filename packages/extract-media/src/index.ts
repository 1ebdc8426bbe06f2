export {
  audioChunks,
  DEFAULT_CHUNK_OPTIONS,
  SAMPLE_RATE,
  type AudioChunk,
  type ChunkOptions,
} from "./audio-chunks.ts";
export { FFMPEG_PATH, ffmpegStream, runFfmpeg, type FfmpegRun } from "./ffmpeg.ts";
export { MediaReadError, type MediaErrorCode } from "./media-errors.ts";
export { probeMedia, type MediaInfo } from "./probe.ts";
export {
  DEFAULT_SPEECH_PASSAGE_OPTIONS,
  speechPassages,
  type SpeechPassageOptions,
  type TimedText,
} from "./speech-passages.ts";
export { DEFAULT_FRAME_OPTIONS, videoFrames, type FrameOptions, type VideoFrame } from "./video-frames.ts";
export {
  openRecording,
  transcribeRecording,
  transcribeSound,
  type ChunkLogger,
  type OpenedRecording,
  type TranscribeOptions,
} from "./transcribe.ts";
