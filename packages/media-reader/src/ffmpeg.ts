import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { dirname, join } from "node:path";
import { createRequire } from "node:module";
import { limitChild, stallWatched } from "@locus/cpu-scheduler";

const load = createRequire(import.meta.url);

/** The ffmpeg binary shipped in the @ffmpeg-installer package for this platform (a 2018 build). */
export const BUNDLED_FFMPEG_PATH: string = (load("@ffmpeg-installer/ffmpeg") as { path: string }).path;

/** The ffprobe binary shipped in the @ffprobe-installer package for this platform. */
export const BUNDLED_FFPROBE_PATH: string = (load("@ffprobe-installer/ffprobe") as { path: string }).path;

/** Debian's ffmpeg, which gets the distribution's security updates. */
export const SYSTEM_FFMPEG_PATH = "/usr/bin/ffmpeg";

export interface FfmpegChoice {
  path: string;
  /** Why this one: set by LOCUS_FFMPEG_PATH, the system's (Debian's), or the npm package's. */
  source: "setting" | "system" | "bundled";
}

let chosen: FfmpegChoice | undefined;

const executable = (path: string) => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/**
 * Which ffmpeg reads uploads: the one configured, else the system's where installed (a maintained
 * build with security fixes, in the Docker image too), else the npm package's as the fallback, so
 * that a bare machine still works. Chosen once per process; the extractors log the choice at start.
 */
export function chooseFfmpeg(configured?: string): FfmpegChoice {
  if (configured) chosen = { path: configured, source: "setting" };
  else if (executable(SYSTEM_FFMPEG_PATH)) chosen = { path: SYSTEM_FFMPEG_PATH, source: "system" };
  else chosen = { path: BUNDLED_FFMPEG_PATH, source: "bundled" };
  return chosen;
}

/** The ffmpeg in use (chosen with the defaults on first use if nobody chose before). */
export const ffmpegPath = (): string => (chosen ?? chooseFfmpeg()).path;

/**
 * The ffprobe that goes with the ffmpeg in use: the one beside it (Debian's /usr/bin/ffprobe beside
 * /usr/bin/ffmpeg, or a build's bin/ffprobe beside a configured bin/ffmpeg), else the npm
 * package's (@ffprobe-installer, the pair of @ffmpeg-installer, whose folder holds no ffprobe).
 * There is no setting of its own: LOCUS_FFMPEG_PATH names the folder both come from.
 */
export function ffprobePath(): string {
  const ffmpeg = ffmpegPath();
  const beside = join(dirname(ffmpeg), ffmpeg.endsWith(".exe") ? "ffprobe.exe" : "ffprobe");
  return ffmpeg !== BUNDLED_FFMPEG_PATH && executable(beside) ? beside : BUNDLED_FFPROBE_PATH;
}

/**
 * Chooses the ffmpeg (see chooseFfmpeg) and says which, with its version and the ffprobe beside it
 * (see ffprobePath), for the start log. A binary that does not run stops the start: reading every
 * recording would fail.
 */
export async function useFfmpeg(
  configured?: string,
): Promise<FfmpegChoice & { version: string; ffprobe: string }> {
  const choice = chooseFfmpeg(configured);
  let version: string;
  try {
    version = await ffmpegVersion();
  } catch (err) {
    throw new Error(`ffmpeg cannot be run from ${choice.path} (${choice.source})`, { cause: err });
  }
  const ffprobe = ffprobePath();
  try {
    await firstLineOf(ffprobe, ["-version"]);
  } catch (err) {
    throw new Error(`ffprobe cannot be run from ${ffprobe}`, { cause: err });
  }
  return { ...choice, version, ffprobe };
}

/** The first line of `ffmpeg -version` ("ffmpeg version 5.1.7-0+deb12u1 ..."), for the start log. */
export function ffmpegVersion(): Promise<string> {
  return firstLineOf(ffmpegPath(), ["-version"]);
}

async function firstLineOf(command: string, args: readonly string[]): Promise<string> {
  let out = "";
  await new Promise<void>((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "ignore"] });
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (text: string) => (out += text));
    child.once("error", reject);
    child.once("close", () => resolve());
  });
  return out.split("\n")[0]?.trim() ?? "";
}

export interface FfmpegRun {
  /** ffmpeg's exit code (null when it was killed). */
  code: number | null;
  /** The end of what ffmpeg said on stderr: its errors. */
  stderr: string;
  /** Why its limits stopped it, as a sentence ("used 12 s of processor time, …"); else undefined. */
  stopped?: string | undefined;
}

/**
 * What one run of ffmpeg or ffprobe may use. Processor time, not wall-clock time, is the budget: on
 * a busy machine a run waits for a core without being stopped for it (#35).
 */
export interface FfmpegLimits {
  /** Processor time of the run, in milliseconds: past it, the file is too costly to read. */
  cpuMs: number;
  /**
   * A ceiling for a hang (a hang uses no processor time), in milliseconds: for ffprobe, the whole
   * run; for a stream, the longest its reader waits for the next piece of output, since the reader's
   * own pace (a recogniser working through each chunk) is not ffmpeg's.
   */
  hangMs: number;
}

/** Keeps the last part of ffmpeg's talk: enough for its errors, bounded for long files. */
const STDERR_KEEP = 64 * 1024;

/**
 * Starts ffmpeg with its output as a stream: reading it at your own pace holds ffmpeg back (a full
 * pipe blocks it), so memory stays flat whatever the length of the input. `done` resolves when
 * ffmpeg exits (with `stopped` set when its limits ended it); `stop` ends it early.
 */
export function ffmpegStream(
  args: readonly string[],
  limits: FfmpegLimits,
): {
  /** ffmpeg's output as it comes; a wait for the next piece longer than `limits.hangMs` stops it. */
  output: () => AsyncGenerator<Buffer>;
  done: Promise<FfmpegRun>;
  stop: () => void;
  /** Also hands what ffmpeg says on stderr, as it comes, to `listener`. */
  onStderr: (listener: (text: string) => void) => void;
  exited: () => boolean;
} {
  const child = spawn(ffmpegPath(), ["-hide_banner", "-nostdin", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const limit = limitChild(child, { cpuMs: limits.cpuMs, wallMs: Infinity });
  let hung = false;
  let stderr = "";
  let exited = false;
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (text: string) => {
    stderr = (stderr + text).slice(-STDERR_KEEP);
  });
  const done = new Promise<FfmpegRun>((resolve, reject) => {
    child.once("error", (err) => {
      exited = true;
      limit.dispose();
      reject(err);
    });
    child.once("close", (code) => {
      exited = true;
      limit.dispose();
      const stopped = hung
        ? `gave no output for ${Math.round(limits.hangMs / 1000)} s (a hang)`
        : limit.stopDescription();
      resolve({ code, stderr, stopped });
    });
  });
  // An early failure (no binary) surfaces through `done`; reading the stream then just ends.
  done.catch(() => undefined);
  // Only the wait for output counts: while the caller works on a piece, ffmpeg waits for it.
  const output = (): AsyncGenerator<Buffer> =>
    stallWatched(child.stdout as AsyncIterable<Buffer>, limits.hangMs, () => {
      hung = true;
      child.kill("SIGKILL");
    });
  return {
    output,
    done,
    stop: () => child.kill("SIGKILL"),
    onStderr: (listener) => child.stderr.on("data", listener),
    exited: () => exited,
  };
}

/** What ffprobe may use: it reads headers, in tens of milliseconds on an ordinary file. */
const FFPROBE_LIMITS: FfmpegLimits = { cpuMs: 10_000, hangMs: 100_000 };

/** ffprobe's JSON is a few KB a stream; more than this is no recording Locus reads. */
const FFPROBE_OUTPUT_LIMIT = 4 * 1024 * 1024;

/**
 * Runs `ffprobe -v error -print_format json -show_format -show_streams` on `args` (the input) and
 * returns what it printed: its JSON (cut off past 4 MB, when ffprobe is stopped) and its errors.
 * Never rejects for a non-zero exit, only when ffprobe cannot be started at all.
 */
export function runFfprobe(args: readonly string[]): Promise<FfmpegRun & { stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      ffprobePath(),
      ["-hide_banner", "-v", "error", "-print_format", "json", "-show_format", "-show_streams", ...args],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    const limit = limitChild(child, { cpuMs: FFPROBE_LIMITS.cpuMs, wallMs: FFPROBE_LIMITS.hangMs });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (text: string) => {
      stdout += text;
      if (stdout.length > FFPROBE_OUTPUT_LIMIT) child.kill("SIGKILL");
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (text: string) => {
      stderr = (stderr + text).slice(-STDERR_KEEP);
    });
    child.once("error", (err) => {
      limit.dispose();
      reject(err);
    });
    child.once("close", (code) => {
      limit.dispose();
      resolve({ code, stdout, stderr, stopped: limit.stopDescription() });
    });
  });
}
