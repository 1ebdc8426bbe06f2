import { FRAME_BYTES, frameRms, QUIET_RMS } from "@locus/speech-to-text";
import { ffmpegStream, type FfmpegLimits } from "./ffmpeg.ts";
import { MediaReadError } from "./media-errors.ts";
import { inputArgs, type MediaInput } from "./media-input.ts";

/** What speech recognisers take: 16 kHz, mono, signed 16-bit little-endian samples. */
export const SAMPLE_RATE = 16_000;
const BYTES_PER_SECOND = SAMPLE_RATE * 2;

export interface AudioChunk {
  /** Seconds from the start of the recording. */
  startS: number;
  durationS: number;
  /** 16 kHz mono s16le samples. */
  pcm: Buffer;
  /** Nothing in it rises above the silence level: there is nothing to transcribe. */
  silent: boolean;
}

export interface ChunkOptions {
  /** A chunk is cut at the first pause after it is this long… */
  targetS: number;
  /** …or, with no pause, at this length. */
  maxS: number;
  /** A pause is this long a run of quiet frames. */
  minPauseS: number;
  /** A frame quieter than this RMS (of 32768) is quiet: about −38 dBFS. */
  silenceRms: number;
}

export const DEFAULT_CHUNK_OPTIONS: ChunkOptions = {
  targetS: 20,
  maxS: 40,
  minPauseS: 0.3,
  silenceRms: QUIET_RMS,
};

/**
 * Decodes a recording's sound with ffmpeg, streamed to 16 kHz mono PCM, and cuts it into chunks
 * at pauses (at least `targetS` long, at most `maxS`), so that a long recording is transcribed a
 * piece at a time with bounded memory. Returns the decoded length in seconds. Throws
 * MediaReadError when ffmpeg cannot decode the file, or cannot within `limits` (see decodeLimits).
 */
export async function* audioChunks(
  input: MediaInput,
  limits: FfmpegLimits,
  options: ChunkOptions = DEFAULT_CHUNK_OPTIONS,
): AsyncGenerator<AudioChunk, number> {
  const ffmpeg = ffmpegStream(
    [...inputArgs(input), "-vn", "-ac", "1", "-ar", String(SAMPLE_RATE), "-f", "s16le", "pipe:1"],
    limits,
  );
  const pauseFrames = Math.max(1, Math.round((options.minPauseS * 1000) / 20));
  let parts: Buffer[] = [];
  let length = 0;
  let startS = 0;
  let quietRun = 0;
  let loud = false;
  let carry = Buffer.alloc(0);

  const cut = (): AudioChunk => {
    const pcm = Buffer.concat(parts, length);
    const chunk = { startS, durationS: length / BYTES_PER_SECOND, pcm, silent: !loud };
    startS += chunk.durationS;
    parts = [];
    length = 0;
    loud = false;
    return chunk;
  };

  let finished = false;
  try {
    for await (const data of ffmpeg.output()) {
      // Whole frames only; the rest waits for the next piece of output.
      const buffer = carry.length > 0 ? Buffer.concat([carry, data]) : data;
      const whole = buffer.length - (buffer.length % FRAME_BYTES);
      carry = Buffer.from(buffer.subarray(whole));
      for (let offset = 0; offset < whole; offset += FRAME_BYTES) {
        const frame = buffer.subarray(offset, offset + FRAME_BYTES);
        const quiet = frameRms(frame, 0) < options.silenceRms;
        quietRun = quiet ? quietRun + 1 : 0;
        if (!quiet) loud = true;
        parts.push(Buffer.from(frame));
        length += FRAME_BYTES;
        const seconds = length / BYTES_PER_SECOND;
        if ((seconds >= options.targetS && quietRun >= pauseFrames) || seconds >= options.maxS) yield cut();
      }
    }
    if (carry.length > 0) {
      parts.push(carry);
      length += carry.length;
    }
    const { code, stderr, stopped } = await ffmpeg.done;
    if (stopped) {
      throw new MediaReadError(
        "media_timeout",
        `Decoding the recording's sound ${stopped}; the file may be damaged or built to stall readers.`,
      );
    }
    if (code !== 0) {
      throw new MediaReadError(
        "media_corrupt",
        "The recording is damaged or not a format Locus can decode.",
        { cause: new Error(stderr.split("\n").slice(-3).join(" ").trim()) },
      );
    }
    if (length > 0) yield cut();
    finished = true;
    return startS;
  } finally {
    // A reader that stopped early (or an error) leaves ffmpeg running: end it.
    if (!finished) ffmpeg.stop();
  }
}
