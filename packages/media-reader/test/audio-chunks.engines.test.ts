import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encodeAudio, recording, speak, type AudioFormat } from "@locus/testing";
import {
  audioChunks,
  decodeLimits,
  ffmpegStream,
  MediaReadError,
  mediaInput,
  probeMedia,
  type AudioChunk,
  type FfmpegLimits,
  type MediaInput,
} from "../src/index.ts";

/** The MIME type the upload's sniffing gives each format (it picks ffmpeg's demuxer). */
const MIME: Record<AudioFormat, string> = {
  wav: "audio/wav",
  mp3: "audio/mpeg",
  m4a: "audio/x-m4a",
  ogg: "audio/ogg",
  opus: "audio/ogg; codecs=opus",
  flac: "audio/flac",
};

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "locus-media-test-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function onDisk(name: string, data: Buffer, mimeType = "audio/wav"): Promise<MediaInput> {
  const input = mediaInput(join(dir, name), mimeType);
  await writeFile(input.path, data);
  return input;
}

async function allChunks(
  input: MediaInput,
  options?: Parameters<typeof audioChunks>[2],
  { limits = decodeLimits("sound", 3600), readerMs = 0 }: { limits?: FfmpegLimits; readerMs?: number } = {},
) {
  const chunks: AudioChunk[] = [];
  const gen = audioChunks(input, limits, options);
  for (;;) {
    const next = await gen.next();
    if (next.done) return { chunks, decodedS: next.value };
    chunks.push(next.value);
    // The reader's own work on a chunk (a recogniser, a wait for a core), during which ffmpeg waits.
    await new Promise((resolve) => setTimeout(resolve, readerMs));
  }
}

describe("audioChunks (real ffmpeg: Debian's where installed, else the npm package's)", () => {
  let speech: Buffer;
  beforeAll(async () => {
    speech = recording([1, await speak("The harbour opens at dawn."), 1]);
  });

  it.each(["wav", "mp3", "m4a", "ogg", "opus", "flac"] as AudioFormat[])(
    "decodes %s to 16 kHz mono of the recording's length",
    async (format) => {
      const path = await onDisk(`speech.${format}`, await encodeAudio(speech, format), MIME[format]);
      const { chunks, decodedS } = await allChunks(path);
      const seconds = (speech.length - 44) / 32_000;
      expect(Math.abs(decodedS - seconds)).toBeLessThan(0.15);
      expect(chunks.reduce((s, c) => s + c.pcm.length, 0) / 32_000).toBeCloseTo(decodedS, 3);
      expect(chunks.some((c) => !c.silent)).toBe(true);
      const info = await probeMedia(path);
      expect(info).toMatchObject({ hasAudio: true, hasVideo: false });
      expect(Math.abs((info.durationS ?? 0) - seconds)).toBeLessThan(0.15);
    },
  );

  it("cuts long recordings at pauses, never inside speech", async () => {
    const sentence = await speak("Each sentence here is spoken between two pauses of silence.");
    const parts: (Buffer | number)[] = [];
    for (let i = 0; i < 6; i++) parts.push(sentence, 0.8);
    const path = await onDisk("long.wav", recording(parts));
    const { chunks } = await allChunks(path, { targetS: 4, maxS: 30, minPauseS: 0.3, silenceRms: 400 });
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks.slice(0, -1)) {
      // The last 0.3 s of every cut chunk is quiet: the cut fell in a pause.
      const tail = chunk.pcm.subarray(chunk.pcm.length - 0.3 * 32_000);
      let peak = 0;
      for (let i = 0; i + 1 < tail.length; i += 2) peak = Math.max(peak, Math.abs(tail.readInt16LE(i)));
      expect(peak).toBeLessThan(2000);
      expect(chunk.durationS).toBeGreaterThanOrEqual(4);
    }
    // Chunks follow each other without gaps.
    chunks.reduce((at, c) => {
      expect(c.startS).toBeCloseTo(at, 5);
      return at + c.durationS;
    }, 0);
  });

  it("cuts at the longest allowed length when nobody pauses", async () => {
    const path = await onDisk("tone.wav", await encodeTone(7));
    const { chunks } = await allChunks(path, { targetS: 2, maxS: 3, minPauseS: 0.3, silenceRms: 400 });
    expect(chunks.map((c) => Math.round(c.durationS))).toEqual([3, 3, 1]);
  });

  it("marks silence as silent", async () => {
    const path = await onDisk("silence.wav", recording([5]));
    const { chunks } = await allChunks(path);
    expect(chunks.every((c) => c.silent)).toBe(true);
  });

  it("refuses what ffmpeg cannot decode", async () => {
    const path = await onDisk(
      "noise.mp3",
      Buffer.from("ID3 this is not really an mp3 file at all"),
      "audio/mpeg",
    );
    await expect(allChunks(path)).rejects.toBeInstanceOf(MediaReadError);
    await expect(probeMedia(path)).rejects.toMatchObject({ code: "media_corrupt" });
  });
});

describe("ffmpeg's limits: processor time and hangs, not the reader's pace (#35, real ffmpeg)", () => {
  let minute: MediaInput;
  beforeAll(async () => {
    minute = await onDisk("minute.wav", await encodeTone(60));
  });

  it("lets a slow reader take far longer than the limits: ffmpeg waiting for it is neither working nor hung", async () => {
    const started = Date.now();
    const { chunks, decodedS } = await allChunks(
      minute,
      { targetS: 10, maxS: 10, minPauseS: 0.3, silenceRms: 400 },
      { limits: { cpuMs: 2_000, hangMs: 1_000 }, readerMs: 700 },
    );
    expect(Date.now() - started).toBeGreaterThan(3_000);
    expect(chunks).toHaveLength(6);
    expect(decodedS).toBeCloseTo(60, 1);
  });

  it("fails a recording whose decoding uses more processor time than its budget (media_timeout)", async () => {
    // ffmpeg's start alone uses more than a millisecond; the reader keeps it alive past a reading.
    const failure = await allChunks(
      minute,
      { targetS: 10, maxS: 10, minPauseS: 0.3, silenceRms: 400 },
      { limits: { cpuMs: 1, hangMs: 60_000 }, readerMs: 600 },
    ).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(MediaReadError);
    expect(failure).toMatchObject({
      code: "media_timeout",
      message: expect.stringMatching(
        /^Decoding the recording's sound used [\d.]+ s of processor time, over its budget of 0 s/,
      ),
    });
  });

  it("stops ffmpeg when it leaves its reader waiting too long (a hang: a pipe nobody writes to)", async () => {
    const fifo = join(dir, "never-written.wav");
    execFileSync("mkfifo", [fifo]);
    const started = Date.now();
    const failure = await allChunks(mediaInput(fifo, "audio/wav"), undefined, {
      limits: { cpuMs: 60_000, hangMs: 1_000 },
    }).catch((err: unknown) => err);
    expect(failure).toMatchObject({
      code: "media_timeout",
      message: expect.stringMatching(/gave no output for 1 s \(a hang\)/),
    });
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it("stops a stream that burns processor time, and says how much it used", async () => {
    // A fractal drawn at full HD: seconds of processor time a frame.
    const ffmpeg = ffmpegStream(
      ["-f", "lavfi", "-i", "mandelbrot=size=1920x1080:rate=25", "-t", "600", "-f", "rawvideo", "pipe:1"],
      { cpuMs: 1_500, hangMs: 60_000 },
    );
    for await (const piece of ffmpeg.output()) void piece;
    const run = await ffmpeg.done;
    expect(run.code).toBeNull();
    expect(run.stopped).toMatch(/^used [\d.]+ s of processor time, over its budget of 1.5 s$/);
  }, 30_000);
});

/** A steady tone with no pause in it, `seconds` long. */
function encodeTone(seconds: number): Promise<Buffer> {
  const samples = Buffer.alloc(seconds * 16_000 * 2);
  for (let i = 0; i < seconds * 16_000; i++) samples.writeInt16LE(Math.round(8000 * Math.sin(i / 5)), i * 2);
  const header = recording([0]).subarray(0, 44);
  header.writeUInt32LE(36 + samples.length, 4);
  header.writeUInt32LE(samples.length, 40);
  return Promise.resolve(Buffer.concat([header, samples]));
}
