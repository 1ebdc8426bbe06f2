import type { Readable } from "node:stream";
import type { ExtractedPassage } from "@locus/contracts";
import {
  decodeLimits,
  DEFAULT_FRAME_OPTIONS,
  openRecording,
  transcribeSound,
  videoFrames,
  type ChunkLogger,
  type FrameOptions,
} from "@locus/media-reader";
import { keptLines, type OcrEngine } from "@locus/ocr-reader";
import type { ExtractionSummary } from "@locus/extraction-job";
import type { Lexicon } from "@locus/passages";
import type { SpeechToText } from "@locus/speech-to-text";
import { framePrint, printDistance, ScreenText } from "./screen-text.ts";

export interface ReadVideoOptions {
  speech: SpeechToText;
  engine: OcrEngine;
  logger: ChunkLogger;
  /** The file the video is (its id): its CPU-heavy work takes its turn with other files'. */
  owner?: string | undefined;
  maxDurationS: number;
  /** Lines read with less confidence than this (0–1) are dropped as noise. */
  minConfidence: number;
  /** Tells broken words from compounds at the ends of lines shown on screen. */
  lexicon?: Lexicon;
  frames?: FrameOptions;
}

/** Frames whose prints differ nowhere by more than this (grey levels) show the same thing. */
const SAME_FRAME = 4;

/**
 * A video's words: what is said (its sound track, transcribed as a recording is) and what is shown
 * (frames picked at scene changes and at least every few seconds, identical ones skipped, read by
 * OCR; text that stays on screen is one passage with the interval it is visible). A video without
 * sound gives what is shown; one without pictures what is said. Returns the video's length.
 * `data` is the video's bytes or a stream of them (see openRecording).
 */
export async function* readVideo(
  data: Buffer | Readable,
  mimeType: string,
  options: ReadVideoOptions,
  progress: (done: number) => void,
): AsyncGenerator<ExtractedPassage, ExtractionSummary> {
  const recording = await openRecording(data, mimeType, options.maxDurationS);
  try {
    const { input, info } = recording;
    // Sound first, then pictures: each takes about half the work when both are there.
    const soundShare = info.hasAudio && info.hasVideo ? 0.5 : 1;
    let decodedS = 0;
    if (info.hasAudio) {
      decodedS = yield* transcribeSound(input, info, options, (done) => progress(done * soundShare));
    }
    if (info.hasVideo) {
      const frameOptions = options.frames ?? DEFAULT_FRAME_OPTIONS;
      const screen = new ScreenText();
      let last: { print: Float64Array; lines: Parameters<ScreenText["see"]>[1] } | null = null;
      let lastTime = 0;
      const limits = decodeLimits("pictures", info.durationS ?? options.maxDurationS);
      for await (const frame of videoFrames(input, limits, frameOptions)) {
        lastTime = frame.timeS;
        if (info.durationS) progress(1 - soundShare + soundShare * Math.min(1, frame.timeS / info.durationS));
        const print = framePrint(frame.pgm, frame.width, frame.height);
        if (last && printDistance(print, last.print) < SAME_FRAME) {
          screen.see(frame.timeS, last.lines);
          continue;
        }
        const read = await options.engine.recognize(frame.pgm, { owner: options.owner });
        const geometry = {
          scale: 1,
          width: frame.width,
          height: frame.height,
          originalWidth: frame.width,
          originalHeight: frame.height,
        };
        const lines = keptLines(read, geometry, options.minConfidence, options.lexicon);
        screen.see(frame.timeS, lines);
        last = { print, lines };
      }
      yield* screen.finish(info.durationS ?? lastTime + frameOptions.floorS);
    }
    const durationS = info.durationS ?? decodedS;
    return { pageCount: null, durationS: Math.round(durationS * 100) / 100 };
  } finally {
    await recording.close();
  }
}
