import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const FFMPEG = (createRequire(import.meta.url)("@ffmpeg-installer/ffmpeg") as { path: string }).path;

async function inTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), "locus-media-"));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Speech made by Debian's flite (16 kHz mono WAV): a clear synthetic voice that an offline
 * recogniser understands, made on the spot from known words.
 */
export function speak(text: string, voice = "slt"): Promise<Buffer> {
  return inTempDir(async (dir) => {
    const out = join(dir, "speech.wav");
    await run("flite", ["-voice", voice, "-t", text, "-o", out]);
    return readFile(out);
  });
}

/** The samples of a 16-bit WAV: its "data" chunk, wherever the header puts it (files made elsewhere may have others before it). */
export function wavSamples(wav: Buffer): Buffer {
  let at = 12;
  while (at + 8 <= wav.length) {
    const id = wav.toString("latin1", at, at + 4);
    const size = wav.readUInt32LE(at + 4);
    if (id === "data") return wav.subarray(at + 8, at + 8 + size);
    at += 8 + size + (size % 2);
  }
  throw new Error("not a WAV file");
}

/** A 16 kHz mono WAV of the given samples. */
export function wav16k(samples: Buffer): Buffer {
  return Buffer.concat([wav16kHeader(samples.length), samples]);
}

/** The header of a 16 kHz mono 16-bit WAV declaring `dataBytes` of samples (true or not). */
export function wav16kHeader(dataBytes: number): Buffer {
  const header = Buffer.alloc(44);
  header.write("RIFF", 0, "latin1");
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write("WAVEfmt ", 8, "latin1");
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(16_000, 24);
  header.writeUInt32LE(32_000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write("data", 36, "latin1");
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

/** Pieces of 16 kHz mono speech (from `speak`) and silences (seconds), one after the other. */
export function recording(parts: (Buffer | number)[]): Buffer {
  return wav16k(
    Buffer.concat(
      parts.map((p) => (typeof p === "number" ? Buffer.alloc(Math.round(p * 16_000) * 2) : wavSamples(p))),
    ),
  );
}

export type AudioFormat = "wav" | "mp3" | "m4a" | "ogg" | "opus" | "flac";

const CODECS: Record<Exclude<AudioFormat, "wav">, string[]> = {
  mp3: ["-c:a", "libmp3lame", "-b:a", "64k"],
  m4a: ["-c:a", "aac", "-b:a", "64k"],
  ogg: ["-c:a", "libvorbis", "-q:a", "3"],
  opus: ["-c:a", "libopus", "-b:a", "32k"],
  flac: ["-c:a", "flac"],
};

/** Re-encodes a WAV with the ffmpeg that ships in @ffmpeg-installer/ffmpeg. */
export function encodeAudio(wav: Buffer, format: AudioFormat): Promise<Buffer> {
  if (format === "wav") return Promise.resolve(wav);
  return inTempDir(async (dir) => {
    const input = join(dir, "in.wav");
    const out = join(dir, `out.${format === "opus" ? "ogg" : format}`);
    await writeFile(input, wav);
    await run(FFMPEG, ["-hide_banner", "-nostdin", "-y", "-i", input, ...CODECS[format], out]);
    return readFile(out);
  });
}

export type VideoFormat = "mp4" | "mov" | "mkv" | "webm";

export interface VideoSpec {
  /** Pictures shown one after the other (PNG or JPEG; scaled to the frame), each for `seconds`. */
  slides: { image: Buffer; seconds: number }[];
  /** A sound track (WAV), cut or padded to the pictures' length; none makes a silent video. */
  sound?: Buffer;
  format: VideoFormat;
  width?: number;
  height?: number;
}

/**
 * A video assembled with ffmpeg from still pictures (slides) and a sound track, as a screen
 * recording or a recorded talk would be. Five frames a second, to keep it quick to make.
 */
export function makeVideo(spec: VideoSpec): Promise<Buffer> {
  const width = spec.width ?? 960;
  const height = spec.height ?? 540;
  return inTempDir(async (dir) => {
    const inputs: string[] = [];
    for (const [i, slide] of spec.slides.entries()) {
      const file = join(dir, `slide-${i}.img`);
      await writeFile(file, slide.image);
      inputs.push("-loop", "1", "-t", String(slide.seconds), "-i", file);
    }
    const fit = `scale=${width}:${height}:force_original_aspect_ratio=decrease,pad=${width}:${height}:(ow-iw)/2:(oh-ih)/2:white,setsar=1`;
    const scaled = spec.slides.map((_, i) => `[${i}:v]${fit}[s${i}]`).join(";");
    const joined = `${spec.slides.map((_, i) => `[s${i}]`).join("")}concat=n=${spec.slides.length}:v=1:a=0,format=yuv420p[v]`;
    const args = [...inputs];
    const maps = ["-map", "[v]"];
    if (spec.sound) {
      const sound = join(dir, "sound.wav");
      await writeFile(sound, spec.sound);
      args.push("-i", sound);
      maps.push("-map", `${spec.slides.length}:a`, "-af", "apad", "-shortest");
    }
    const codecs =
      spec.format === "webm"
        ? ["-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "400k", "-c:a", "libopus"]
        : ["-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac"];
    const out = join(dir, `video.${spec.format}`);
    await run(FFMPEG, [
      "-hide_banner",
      "-nostdin",
      "-y",
      ...args,
      "-filter_complex",
      `${scaled};${joined}`,
      ...maps,
      "-r",
      "5",
      ...codecs,
      out,
    ]);
    return readFile(out);
  });
}
