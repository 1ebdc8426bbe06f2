import { spawn } from "node:child_process";
import type { Readable } from "node:stream";
import { createRequire } from "node:module";

/** The ffmpeg binary shipped in the @ffmpeg-installer package for this platform: nothing to install. */
export const FFMPEG_PATH: string = (
  createRequire(import.meta.url)("@ffmpeg-installer/ffmpeg") as { path: string }
).path;

export interface FfmpegRun {
  /** ffmpeg's exit code (null when it was killed). */
  code: number | null;
  /** The end of what ffmpeg said on stderr: its errors, and for a probe the input's description. */
  stderr: string;
}

/** Keeps the last part of ffmpeg's talk: enough for errors and a probe, bounded for long files. */
const STDERR_KEEP = 64 * 1024;

/**
 * Runs ffmpeg with `args`; `onStdout` takes its output as it comes (the caller applies back-pressure
 * by returning a promise). Resolves when ffmpeg exits; never rejects for a non-zero exit (the caller
 * decides what that means), only when ffmpeg cannot be started at all.
 */
export function runFfmpeg(
  args: readonly string[],
  options: { onStdout?: (chunk: Buffer) => Promise<void> | void; signal?: AbortSignal } = {},
): Promise<FfmpegRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(FFMPEG_PATH, ["-hide_banner", "-nostdin", ...args], {
      stdio: ["ignore", "pipe", "pipe"],
      ...(options.signal ? { signal: options.signal } : {}),
    });
    let stderr = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (text: string) => {
      stderr = (stderr + text).slice(-STDERR_KEEP);
    });
    child.stdout.on("data", (chunk: Buffer) => {
      const pending = options.onStdout?.(chunk);
      if (pending instanceof Promise) {
        // Back-pressure: ffmpeg blocks on a full pipe while the caller works through a chunk.
        child.stdout.pause();
        pending.then(
          () => child.stdout.resume(),
          (err: unknown) => {
            child.kill("SIGKILL");
            reject(err instanceof Error ? err : new Error(String(err)));
          },
        );
      }
    });
    child.once("error", (err) => reject(err));
    child.once("close", (code) => resolve({ code, stderr }));
  });
}

/**
 * Starts ffmpeg with its output as a stream: reading it at your own pace holds ffmpeg back (a full
 * pipe blocks it), so memory stays flat whatever the length of the input. `done` resolves when
 * ffmpeg exits; `stop` ends it early.
 */
export function ffmpegStream(args: readonly string[]): {
  stdout: Readable;
  done: Promise<FfmpegRun>;
  stop: () => void;
  /** Also hands what ffmpeg says on stderr, as it comes, to `listener`. */
  onStderr: (listener: (text: string) => void) => void;
  exited: () => boolean;
} {
  const child = spawn(FFMPEG_PATH, ["-hide_banner", "-nostdin", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  let exited = false;
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (text: string) => {
    stderr = (stderr + text).slice(-STDERR_KEEP);
  });
  const done = new Promise<FfmpegRun>((resolve, reject) => {
    child.once("error", (err) => {
      exited = true;
      reject(err);
    });
    child.once("close", (code) => {
      exited = true;
      resolve({ code, stderr });
    });
  });
  // An early failure (no binary) surfaces through `done`; reading the stream then just ends.
  done.catch(() => undefined);
  return {
    stdout: child.stdout,
    done,
    stop: () => child.kill("SIGKILL"),
    onStderr: (listener) => child.stderr.on("data", listener),
    exited: () => exited,
  };
}
