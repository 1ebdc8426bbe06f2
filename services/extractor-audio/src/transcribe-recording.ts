import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtractedPassage } from "@locus/contracts";
import {
  audioChunks,
  DEFAULT_CHUNK_OPTIONS,
  MediaReadError,
  probeMedia,
  speechPassages,
  type ChunkOptions,
} from "@locus/extract-media";
import type { ExtractionSummary } from "@locus/extractor-kit";
import type { Logger } from "@locus/runtime";
import { SpeechEngineError, type SpeechToText } from "@locus/speech-to-text";

export interface TranscribeOptions {
  speech: SpeechToText;
  logger: Logger;
  /** Recordings declaring more than this many seconds are refused. */
  maxDurationS: number;
  chunks?: ChunkOptions;
}

/** A recording whose decoded sound falls this far short of its declared length was cut off. */
const TRUNCATED_SHARE = 0.9;

/**
 * Transcribes a recording: ffmpeg streams its sound as 16 kHz mono PCM, cut at pauses into chunks
 * of tens of seconds, each transcribed in turn (memory stays flat whatever the length); silent
 * chunks are skipped. Passages carry `timestamp` and `timestamp_end` in seconds. A chunk the
 * engine fails on is skipped and logged, so one bad chunk does not sink the file; if every chunk
 * fails, the error is thrown (and the bus retries the file).
 *
 * Throws MediaReadError for recordings that cannot be decoded, are cut off, too long or silent in
 * the sense of having no sound track, and SpeechEngineError when the engine cannot run at all.
 */
export async function* transcribeRecording(
  data: Buffer,
  options: TranscribeOptions,
  progress: (done: number) => void,
): AsyncGenerator<ExtractedPassage, ExtractionSummary> {
  // ffmpeg needs to seek in MP4 and MOV (the index may sit at the end): give it a file.
  const dir = await mkdtemp(join(tmpdir(), "locus-recording-"));
  try {
    const path = join(dir, "recording");
    await writeFile(path, data);
    const info = await probeMedia(path);
    if (!info.hasAudio) {
      throw new MediaReadError("media_no_audio", "The recording has no sound track.");
    }
    if (info.durationS !== null && info.durationS > options.maxDurationS) {
      throw new MediaReadError(
        "media_too_long",
        `The recording is ${Math.round(info.durationS / 60)} minutes long; Locus transcribes recordings up to ${Math.round(options.maxDurationS / 60)} minutes.`,
      );
    }
    let transcribed = 0;
    let failed = 0;
    let lastError: unknown;
    const chunks = audioChunks(path, options.chunks ?? DEFAULT_CHUNK_OPTIONS);
    let decodedS: number;
    for (;;) {
      const next = await chunks.next();
      if (next.done) {
        decodedS = next.value;
        break;
      }
      const chunk = next.value;
      if (info.durationS) progress((chunk.startS + chunk.durationS) / info.durationS);
      if (chunk.silent) continue;
      transcribed += 1;
      try {
        const segments = await options.speech.transcribe(chunk.pcm);
        yield* speechPassages(
          segments.map((s) => ({
            ...s,
            start: chunk.startS + s.start,
            end: chunk.startS + s.end,
            ...(s.words
              ? {
                  words: s.words.map((w) => ({
                    ...w,
                    start: chunk.startS + w.start,
                    end: chunk.startS + w.end,
                  })),
                }
              : {}),
          })),
        );
      } catch (err) {
        if (err instanceof SpeechEngineError) throw err;
        failed += 1;
        lastError = err;
        options.logger.warn(
          { err, startS: chunk.startS, durationS: chunk.durationS },
          "a chunk of the recording could not be transcribed; going on without it",
        );
      }
    }
    if (transcribed > 0 && failed === transcribed) throw lastError;
    if (info.durationS !== null && decodedS < info.durationS * TRUNCATED_SHARE - 1) {
      throw new MediaReadError(
        "media_truncated",
        `The recording is cut off: it declares ${info.durationS.toFixed(1)} s and holds ${decodedS.toFixed(1)} s of sound. Upload the whole file again.`,
      );
    }
    return { pageCount: null, durationS: Math.round((info.durationS ?? decodedS) * 100) / 100 };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
