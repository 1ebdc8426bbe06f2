export { startExtractorAudioModule, type ExtractorAudioDeps } from "./extractor-audio-module.ts";
export { startExtractorVideoModule, type ExtractorVideoDeps } from "./extractor-video-module.ts";
export { readVideo, type ReadVideoOptions } from "./read-video.ts";
export { framePrint, printDistance, ScreenText, type ScreenLine } from "./screen-text.ts";
