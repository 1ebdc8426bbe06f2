import { open } from "node:fs/promises";
import { runFfprobe } from "./ffmpeg.ts";
import { MediaReadError } from "./media-errors.ts";
import { inputArgs, type MediaInput } from "./media-input.ts";

export interface MediaInfo {
  /** The container's declared duration, in seconds; null when it declares none. */
  durationS: number | null;
  hasAudio: boolean;
  hasVideo: boolean;
}

/** The part of ffprobe's `-show_format -show_streams` JSON read here; anything may be missing. */
interface ProbeReport {
  format?: { duration?: unknown };
  streams?: { codec_type?: unknown; disposition?: { attached_pic?: unknown } }[];
}

/**
 * What a media file declares: its duration and its streams, from ffprobe's JSON (it reads headers
 * only), with the same demuxer and local-files-only rule as every ffmpeg run. A file ffprobe cannot
 * open is corrupt.
 */
export async function probeMedia(input: MediaInput): Promise<MediaInfo> {
  const { code, stdout, stderr, stopped } = await runFfprobe(inputArgs(input));
  if (stopped) {
    throw new MediaReadError(
      "media_timeout",
      `Reading what the recording declares ${stopped}; the file may be damaged or built to stall readers.`,
    );
  }
  const report = code === 0 ? reportOf(stdout) : undefined;
  if (!report?.format) {
    throw new MediaReadError("media_corrupt", "The recording is damaged or not a format Locus can decode.", {
      cause: new Error(stderr.trim().split("\n").slice(-3).join(" ") || `ffprobe exited with ${code}`),
    });
  }
  // A WAV's own header says how much sound it holds; ffprobe goes by the bytes present, so a WAV
  // cut off in transfer would pass for a shorter whole one.
  const durationS = (await wavDeclaredSeconds(input.path)) ?? centiseconds(report.format.duration);
  const streams = report.streams ?? [];
  return {
    durationS,
    hasAudio: streams.some((s) => s.codec_type === "audio"),
    // Cover art in an MP3 or M4A is a "video" stream of one picture: not a video.
    hasVideo: streams.some((s) => s.codec_type === "video" && s.disposition?.attached_pic !== 1),
  };
}

/**
 * ffprobe's duration ("4.104000": seconds to the microsecond, absent when the container declares
 * none) to the hundredth, rounded as ffmpeg reports it ("Duration: 00:00:04.10"), which is what
 * Locus read before it asked ffprobe.
 */
function centiseconds(duration: unknown): number | null {
  const seconds = typeof duration === "string" ? Number(duration) : NaN;
  if (!Number.isFinite(seconds)) return null;
  return Math.floor((Math.round(seconds * 1e6) + 5_000) / 10_000) / 100;
}

/** ffprobe's JSON as far as it has the expected shape, or undefined when it is not JSON at all. */
function reportOf(stdout: string): ProbeReport | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout);
  } catch {
    return undefined;
  }
  if (typeof parsed !== "object" || parsed === null) return undefined;
  const { format, streams } = parsed as { format?: unknown; streams?: unknown };
  return {
    ...(typeof format === "object" && format !== null ? { format } : {}),
    streams: Array.isArray(streams)
      ? streams.filter((s): s is object => typeof s === "object" && s !== null)
      : [],
  };
}

/** The length a WAV file's header declares (data chunk size / byte rate), or null for other files. */
async function wavDeclaredSeconds(path: string): Promise<number | null> {
  const file = await open(path, "r");
  try {
    const head = Buffer.alloc(4096);
    const { bytesRead } = await file.read(head, 0, head.length, 0);
    if (
      bytesRead < 12 ||
      head.toString("latin1", 0, 4) !== "RIFF" ||
      head.toString("latin1", 8, 12) !== "WAVE"
    ) {
      return null;
    }
    let byteRate = 0;
    // Chunks follow the 12-byte RIFF header: a 4-byte id and a 4-byte size each.
    for (let at = 12; at + 8 <= bytesRead;) {
      const id = head.toString("latin1", at, at + 4);
      const size = head.readUInt32LE(at + 4);
      if (id === "fmt " && at + 20 <= bytesRead) byteRate = head.readUInt32LE(at + 16);
      if (id === "data") return byteRate > 0 && size !== 0xffffffff ? size / byteRate : null;
      at += 8 + size + (size % 2);
    }
    return null;
  } finally {
    await file.close();
  }
}
