import { transcribeRecording } from "@locus/media-reader";
import { ExtractionJob, streamedBlob, type ExtractorModuleDeps } from "@locus/extraction-job";
import type { RunningModule } from "@locus/runtime";
import type { SpeechToText } from "@locus/speech-to-text";
import { prepareMediaReading } from "./media-setup.ts";

export interface ExtractorAudioDeps extends ExtractorModuleDeps {
  speech: SpeechToText;
  maxDurationS: number;
  /** LOCUS_FFMPEG_PATH: the ffmpeg to read media with; unset, Debian's where installed, else npm's. */
  ffmpegPath?: string | undefined;
  concurrency: number;
}

/**
 * Transcribes uploaded recordings (MP3, WAV, M4A/AAC, OGG/Opus, FLAC) into passages with
 * `timestamp` and `timestamp_end`. When the speech engine cannot run here, the start says so, and
 * every recording fails with that reason instead of waiting.
 */
export async function startExtractorAudioModule(deps: ExtractorAudioDeps): Promise<RunningModule> {
  const unavailable = await prepareMediaReading(deps, "recordings");
  const job = new ExtractionJob(
    {
      blobs: deps.blobs,
      bus: deps.bus,
      logger: deps.logger,
      kindName: "recording",
      heartbeatMs: deps.heartbeatMs,
      observer: deps.observer,
      engines: { speech: deps.speech.name },
    },
    // MediaReadError and SpeechEngineError are FileRejectedErrors: the file fails with their reason.
    async function* (data, progress, file) {
      if (unavailable) throw unavailable;
      const durationS = yield* transcribeRecording(
        data,
        file.mimeType,
        {
          speech: deps.speech,
          logger: deps.logger.child({ fileId: file.fileId }),
          owner: file.fileId,
          maxDurationS: deps.maxDurationS,
        },
        progress,
      );
      return { pageCount: null, durationS };
    },
    // Streamed from the blob store to the recording's temporary file, never whole in memory.
    streamedBlob,
  );
  await job.subscribe("extractor-audio", { concurrency: deps.concurrency, maxAttempts: deps.maxAttempts });
  return { stop: () => Promise.resolve() };
}
