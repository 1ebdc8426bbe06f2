import { createWriteStream } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ExtractedPassage } from "@locus/contracts";
import { SpeechEngineError, type SpeechSegment, type SpeechToText } from "@locus/speech-to-text";
import { audioChunks, DEFAULT_CHUNK_OPTIONS, type ChunkOptions } from "./audio-chunks.ts";
import { decodeLimits } from "./decode-limits.ts";
import { MediaReadError } from "./media-errors.ts";
import { mediaInput, refuseReferenceLists, refuseReferenceListsIn, type MediaInput } from "./media-input.ts";
import { probeMedia, type MediaInfo } from "./probe.ts";
import { SpeechPassages } from "./speech-passages.ts";

/** Where a failed chunk is reported: the extractor's logger. */
export interface ChunkLogger {
  warn(details: object, message: string): void;
}

export interface TranscribeOptions {
  speech: SpeechToText;
  logger: ChunkLogger;
  /** The file the recording is (its id): its chunks take their turn with other files' work. */
  owner?: string | undefined;
  /** Recordings declaring more than this many seconds are refused. */
  maxDurationS: number;
  chunks?: ChunkOptions;
}

/**
 * Times a chunk is given to the engine before the recording fails: a second try gets past what
 * passes (a crash of the recogniser, a remote engine's bad moment); what fails twice does not.
 */
export const CHUNK_ATTEMPTS = 2;

/** A recording whose decoded sound falls this far short of its declared length was cut off. */
const TRUNCATED_SHARE = 0.9;

/** A recording written where ffmpeg can read it, and what it declares. */
export interface OpenedRecording {
  input: MediaInput;
  info: MediaInfo;
  /** Removes the file. */
  close(): Promise<void>;
}

/**
 * Writes a recording's bytes to a file of its own (ffmpeg needs to seek in MP4 and MOV, which may
 * keep their index at the end), and checks what it declares. `data` is the bytes, or a stream of
 * them (the blob store's), written to the file as they come so the recording never has to fit in
 * memory. `mimeType` is the type sniffed at upload: ffmpeg reads the file as that container and
 * nothing else. Throws MediaReadError for playlists and lists of other files, files ffmpeg cannot
 * open and recordings longer than `maxDurationS`; a stream's own error is thrown as it is.
 */
export async function openRecording(
  data: Buffer | Readable,
  mimeType: string,
  maxDurationS: number,
): Promise<OpenedRecording> {
  if (Buffer.isBuffer(data)) refuseReferenceLists(data);
  const dir = await mkdtemp(join(tmpdir(), "locus-recording-"));
  const close = () => rm(dir, { recursive: true, force: true });
  try {
    const input = mediaInput(join(dir, "recording"), mimeType);
    if (Buffer.isBuffer(data)) {
      await writeFile(input.path, data);
    } else {
      await pipeline(data, createWriteStream(input.path));
      await refuseReferenceListsIn(input.path);
    }
    const info = await probeMedia(input);
    if (info.durationS !== null && info.durationS > maxDurationS) {
      throw new MediaReadError(
        "media_too_long",
        `The recording is ${Math.round(info.durationS / 60)} minutes long; Locus reads recordings up to ${Math.round(maxDurationS / 60)} minutes.`,
      );
    }
    return { input, info, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * Transcribes the sound of the recording `input`: ffmpeg streams it as 16 kHz mono PCM, cut at
 * pauses into chunks of tens of seconds, each transcribed in turn (memory stays flat whatever the
 * length); silent chunks are skipped. Passages carry `timestamp` and `timestamp_end` in seconds.
 * A chunk the engine fails on is tried again (CHUNK_ATTEMPTS in all); one that still fails fails
 * the recording (`speech_incomplete`, saying which stretch and why): a recording is never `ready`
 * with part of its speech missing (docs/decisions/006-no-partial-content.md). Returns the seconds
 * of sound decoded.
 *
 * Throws MediaReadError for sound that cannot be decoded or is cut off, or whose speech could not
 * be transcribed whole, and SpeechEngineError when the engine cannot run at all.
 */
export async function* transcribeSound(
  input: MediaInput,
  info: MediaInfo,
  options: TranscribeOptions,
  progress: (done: number) => void,
): AsyncGenerator<ExtractedPassage, number> {
  const chunks = audioChunks(
    input,
    decodeLimits("sound", info.durationS ?? options.maxDurationS),
    options.chunks ?? DEFAULT_CHUNK_OPTIONS,
  );
  // One builder for the whole recording: passages overlap across chunk boundaries too.
  const passages = new SpeechPassages();
  let decodedS: number;
  // Read by hand (the chunks' final value is the decoded length), so closed by hand: a chunk that
  // fails must end the decoder too, or its ffmpeg is left waiting on a full pipe, a process lost
  // per failed recording (the engines tier's jest worker would not exit).
  try {
    for (;;) {
      const next = await chunks.next();
      if (next.done) {
        decodedS = next.value;
        break;
      }
      const chunk = next.value;
      if (info.durationS) progress(Math.min(1, (chunk.startS + chunk.durationS) / info.durationS));
      if (chunk.silent) continue;
      const segments = await transcribeChunk(chunk, options);
      yield* passages.add(
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
    }
  } finally {
    await chunks.return(0);
  }
  yield* passages.finish();
  if (info.durationS !== null && decodedS < info.durationS * TRUNCATED_SHARE - 1) {
    throw new MediaReadError(
      "media_truncated",
      `The recording is cut off: it declares ${info.durationS.toFixed(1)} s and holds ${decodedS.toFixed(1)} s of sound. Upload the whole file again.`,
    );
  }
  return decodedS;
}

/** One chunk's speech, tried again once if the engine fails on it (see CHUNK_ATTEMPTS). */
async function transcribeChunk(
  chunk: { pcm: Buffer; startS: number; durationS: number },
  options: TranscribeOptions,
): Promise<SpeechSegment[]> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await options.speech.transcribe(chunk.pcm, { owner: options.owner });
    } catch (err) {
      if (err instanceof SpeechEngineError) throw err;
      const where = { startS: chunk.startS, durationS: chunk.durationS, attempt };
      if (attempt < CHUNK_ATTEMPTS) {
        options.logger.warn(
          { err, ...where },
          "a chunk of the recording could not be transcribed; trying it again",
        );
        continue;
      }
      const reason = err instanceof Error ? err.message : String(err);
      throw new MediaReadError(
        "speech_incomplete",
        `Locus could not transcribe the speech from ${clock(chunk.startS)} to ${clock(chunk.startS + chunk.durationS)} ` +
          `of this recording (tried ${CHUNK_ATTEMPTS} times: ${reason}), so it is not searchable as a whole. ` +
          "Upload it again later; if it fails the same way, the recording may need cutting into shorter files.",
        { cause: err },
      );
    }
  }
}

/** "1:05:09" or "4:07": where a stretch of a recording starts or ends. */
function clock(seconds: number): string {
  const s = Math.floor(seconds);
  const [h, m, sec] = [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60];
  const two = (n: number) => String(n).padStart(2, "0");
  return h > 0 ? `${h}:${two(m)}:${two(sec)}` : `${m}:${two(sec)}`;
}

/** A recording's speech, start to end: its passages, and its length in seconds as the final value. */
export async function* transcribeRecording(
  data: Buffer | Readable,
  mimeType: string,
  options: TranscribeOptions,
  progress: (done: number) => void,
): AsyncGenerator<ExtractedPassage, number> {
  const recording = await openRecording(data, mimeType, options.maxDurationS);
  try {
    const { input, info } = recording;
    if (!info.hasAudio) throw new MediaReadError("media_no_audio", "The recording has no sound track.");
    const decodedS = yield* transcribeSound(input, info, options, progress);
    return Math.round((info.durationS ?? decodedS) * 100) / 100;
  } finally {
    await recording.close();
  }
}
