import type { OcrEngine } from "@locus/ocr-reader";
import { ExtractionJob, streamedBlob, type ExtractorModuleDeps } from "@locus/extraction-job";
import type { RunningModule } from "@locus/runtime";
import type { Lexicon } from "@locus/passages";
import type { SpeechToText } from "@locus/speech-to-text";
import { prepareMediaReading } from "./media-setup.ts";
import { readVideo } from "./read-video.ts";

export interface ExtractorVideoDeps extends ExtractorModuleDeps {
  speech: SpeechToText;
  /** Shared with the image and PDF extractors of the same process. */
  engine: OcrEngine;
  minConfidence: number;
  /** Tells broken words from compounds at the ends of lines shown on screen. */
  lexicon?: Lexicon | undefined;
  maxDurationS: number;
  /** LOCUS_FFMPEG_PATH: the ffmpeg to read media with; unset, Debian's where installed, else npm's. */
  ffmpegPath?: string | undefined;
  concurrency: number;
}

/**
 * Reads uploaded videos (MP4, MOV, MKV, WebM): what is said, with `source: "speech"`, and what is
 * shown, with `source: "screen"`, both with `timestamp` and `timestamp_end`. Without a working
 * speech engine, a video with speech fails with the engine's reason (`speech_engine_unavailable`),
 * as a recording does: it is never `ready` with what it says missing. One without sound, or whose
 * sound is silent, is still read for what it shows.
 */
export async function startExtractorVideoModule(deps: ExtractorVideoDeps): Promise<RunningModule> {
  const unavailable = await prepareMediaReading(deps, "videos with speech");
  // Asked only for sound that is not silent: a video without speech is still read whole.
  const speech: SpeechToText = unavailable
    ? {
        name: "unavailable",
        check: () => Promise.reject(unavailable),
        transcribe: () => Promise.reject(unavailable),
      }
    : deps.speech;
  const job = new ExtractionJob(
    {
      blobs: deps.blobs,
      bus: deps.bus,
      logger: deps.logger,
      kindName: "video",
      heartbeatMs: deps.heartbeatMs,
      observer: deps.observer,
      engines: { speech: deps.speech.name, ocr: deps.engine.kind },
    },
    // Media, speech and image errors are FileRejectedErrors: the file fails with their reason.
    async function* (data, progress, file) {
      return yield* readVideo(
        data,
        file.mimeType,
        {
          speech,
          engine: deps.engine,
          logger: deps.logger.child({ fileId: file.fileId }),
          owner: file.fileId,
          maxDurationS: deps.maxDurationS,
          minConfidence: deps.minConfidence,
          ...(deps.lexicon ? { lexicon: deps.lexicon } : {}),
        },
        progress,
      );
    },
    // Streamed from the blob store to the video's temporary file, never whole in memory.
    streamedBlob,
  );
  await job.subscribe("extractor-video", { concurrency: deps.concurrency, maxAttempts: deps.maxAttempts });
  return { stop: () => Promise.resolve() };
}
