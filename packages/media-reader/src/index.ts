export {
  audioChunks,
  DEFAULT_CHUNK_OPTIONS,
  SAMPLE_RATE,
  type AudioChunk,
  type ChunkOptions,
} from "./audio-chunks.ts";
export {
  BUNDLED_FFMPEG_PATH,
  BUNDLED_FFPROBE_PATH,
  chooseFfmpeg,
  ffmpegPath,
  ffmpegStream,
  ffmpegVersion,
  ffprobePath,
  runFfprobe,
  SYSTEM_FFMPEG_PATH,
  useFfmpeg,
  type FfmpegChoice,
  type FfmpegLimits,
  type FfmpegRun,
} from "./ffmpeg.ts";
export { decodeLimits } from "./decode-limits.ts";
export {
  inputArgs,
  mediaInput,
  refuseReferenceLists,
  refuseReferenceListsIn,
  type MediaInput,
} from "./media-input.ts";
export { MediaReadError, type MediaErrorCode } from "./media-errors.ts";
export { probeMedia, type MediaInfo } from "./probe.ts";
export {
  DEFAULT_SPEECH_PASSAGE_OPTIONS,
  speechPassages,
  transcriptOf,
  SpeechPassages,
  type SpeechPassageOptions,
  type TimedText,
} from "./speech-passages.ts";
export { DEFAULT_FRAME_OPTIONS, videoFrames, type FrameOptions, type VideoFrame } from "./video-frames.ts";
export {
  openRecording,
  CHUNK_ATTEMPTS,
  transcribeRecording,
  transcribeSound,
  type ChunkLogger,
  type OpenedRecording,
  type TranscribeOptions,
} from "./transcribe.ts";
