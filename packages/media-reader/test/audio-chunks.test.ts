import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encodeAudio, recording, speak, type AudioFormat } from "@locus/testing";
import {
  audioChunks,
  MediaReadError,
  mediaInput,
  probeMedia,
  type AudioChunk,
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

async function allChunks(input: MediaInput, options?: Parameters<typeof audioChunks>[1]) {
  const chunks: AudioChunk[] = [];
  const gen = audioChunks(input, options);
  for (;;) {
    const next = await gen.next();
    if (next.done) return { chunks, decodedS: next.value };
    chunks.push(next.value);
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

/** A steady tone with no pause in it, `seconds` long. */
function encodeTone(seconds: number): Promise<Buffer> {
  const samples = Buffer.alloc(seconds * 16_000 * 2);
  for (let i = 0; i < seconds * 16_000; i++) samples.writeInt16LE(Math.round(8000 * Math.sin(i / 5)), i * 2);
  const header = recording([0]).subarray(0, 44);
  header.writeUInt32LE(36 + samples.length, 4);
  header.writeUInt32LE(samples.length, 40);
  return Promise.resolve(Buffer.concat([header, samples]));
}
