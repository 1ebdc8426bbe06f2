import { ffmpegStream, type FfmpegLimits } from "./ffmpeg.ts";
import { MediaReadError } from "./media-errors.ts";
import { inputArgs, type MediaInput } from "./media-input.ts";

export interface VideoFrame {
  /** Seconds from the start of the video. */
  timeS: number;
  /** The frame in grey as a binary PGM: what the OCR engine reads as it is. */
  pgm: Buffer;
  width: number;
  height: number;
}

export interface FrameOptions {
  /**
   * ffmpeg's scene score (0–1) above which a frame starts a new scene. Low: a slide that changes a
   * few lines of text on white scores a few hundredths.
   */
  sceneThreshold: number;
  /** Scene changes closer than this (seconds) to the last frame taken are passed over. */
  minGapS: number;
  /** A frame at least this often (seconds) even without a scene change: slides change quietly. */
  floorS: number;
  /** Frames wider than this are scaled down. */
  maxWidth: number;
}

export const DEFAULT_FRAME_OPTIONS: FrameOptions = {
  sceneThreshold: 0.02,
  minGapS: 1,
  floorS: 5,
  maxWidth: 1920,
};

/** Reads one PGM ("P5 w h 255" then w × h bytes) from the front of `buffer`, or null if incomplete. */
function takePgm(
  buffer: Buffer,
): { frame: { pgm: Buffer; width: number; height: number }; rest: Buffer } | null {
  const header = /^P5\s+(\d+)\s+(\d+)\s+(\d+)\s/.exec(buffer.subarray(0, 64).toString("latin1"));
  if (!header) {
    if (buffer.length >= 64) throw new Error("ffmpeg sent something other than a PGM frame");
    return null;
  }
  const width = Number(header[1]);
  const height = Number(header[2]);
  const end = header[0].length + width * height;
  if (buffer.length < end) return null;
  return { frame: { pgm: buffer.subarray(0, end), width, height }, rest: buffer.subarray(end) };
}

/**
 * The frames of a video worth reading: the first, each one that starts a new scene, and one every
 * `floorS` seconds at least, in grey, with their times. ffmpeg picks them (select + showinfo for
 * the times) and streams them; the caller's pace holds ffmpeg back, so memory stays flat. Throws
 * MediaReadError when ffmpeg cannot decode the pictures, or cannot within `limits` (see
 * decodeLimits).
 */
export async function* videoFrames(
  input: MediaInput,
  limits: FfmpegLimits,
  options: FrameOptions = DEFAULT_FRAME_OPTIONS,
): AsyncGenerator<VideoFrame> {
  // The first frame; a scene change, unless one was taken less than minGapS ago (a moving picture
  // would otherwise give a frame to read every few frames); and one every floorS regardless.
  const select =
    `select='isnan(prev_selected_t)` +
    `+gt(scene,${options.sceneThreshold})*gte(t-prev_selected_t,${options.minGapS})` +
    `+gte(t-prev_selected_t,${options.floorS})'`;
  const filters = [select, "showinfo", `scale='min(${options.maxWidth},iw)':-2`, "format=gray"].join(",");
  const ffmpeg = ffmpegStream(
    [
      ...inputArgs(input),
      "-an",
      "-vf",
      filters,
      "-vsync",
      "vfr",
      "-f",
      "image2pipe",
      "-c:v",
      "pgm",
      "pipe:1",
    ],
    limits,
  );
  // showinfo writes each selected frame's time on stderr; frames come on stdout in the same order.
  const times: number[] = [];
  let seen = "";
  ffmpeg.onStderr((text) => {
    seen = (seen + text).slice(-4096);
    for (;;) {
      const m = /pts_time:\s*(-?\d+(?:\.\d+)?)/.exec(seen);
      if (!m) break;
      times.push(Math.max(0, Number(m[1])));
      seen = seen.slice(m.index + m[0].length);
    }
  });
  let pending: Buffer = Buffer.alloc(0);
  let index = 0;
  let finished = false;
  try {
    for await (const data of ffmpeg.output()) {
      pending = pending.length > 0 ? Buffer.concat([pending, data]) : data;
      for (let next = takePgm(pending); next; next = takePgm(pending)) {
        pending = next.rest;
        // The time may trail its frame by a moment on the other pipe.
        while (times.length <= index && !ffmpeg.exited()) await new Promise((r) => setTimeout(r, 5));
        yield { timeS: times[index] ?? 0, pgm: Buffer.from(next.frame.pgm), ...dims(next.frame) };
        index += 1;
      }
    }
    const { code, stderr, stopped } = await ffmpeg.done;
    if (stopped) {
      throw new MediaReadError(
        "media_timeout",
        `Decoding the video's pictures ${stopped}; the file may be damaged or built to stall readers.`,
      );
    }
    if (code !== 0) {
      throw new MediaReadError("media_corrupt", "The video is damaged or not a format Locus can decode.", {
        cause: new Error(stderr.split("\n").slice(-3).join(" ").trim()),
      });
    }
    finished = true;
  } finally {
    if (!finished) ffmpeg.stop();
  }
}

const dims = (f: { width: number; height: number }) => ({ width: f.width, height: f.height });
