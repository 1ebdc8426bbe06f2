import { AUDIO_MIME_TYPES, VIDEO_MIME_TYPES } from "@locus/contracts";
import { concatList, encodeAudio, hlsPlaylist, mp3Disguise, recording, speak } from "@locus/testing";
import {
  BUNDLED_FFMPEG_PATH,
  BUNDLED_FFPROBE_PATH,
  chooseFfmpeg,
  ffprobePath,
  inputArgs,
  mediaInput,
  openRecording,
  refuseReferenceLists,
  SYSTEM_FFMPEG_PATH,
  useFfmpeg,
} from "../src/index.ts";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Readable } from "node:stream";

describe("how ffmpeg is given an upload", () => {
  it("names the demuxer of the sniffed type and allows only local files", () => {
    expect(inputArgs(mediaInput("/tmp/x/recording", "audio/mpeg"))).toEqual([
      "-protocol_whitelist",
      "file",
      "-f",
      "mp3",
      "-i",
      "/tmp/x/recording",
    ]);
    expect(mediaInput("/r", "video/webm").demuxer).toBe("matroska");
    expect(mediaInput("/r", "audio/x-m4a").demuxer).toBe("mov");
    expect(() => mediaInput("/r", "application/vnd.apple.mpegurl")).toThrow(/does not read/);
    // Every type the upload accepts as a recording or a video has its demuxer.
    for (const mime of [...AUDIO_MIME_TYPES.keys(), ...VIDEO_MIME_TYPES.keys()]) {
      expect({ mime, demuxer: mediaInput("/r", mime).demuxer }).toEqual({
        mime,
        demuxer: expect.any(String),
      });
    }
  });

  it("refuses playlists and concat lists, behind an ID3 tag or not, and lets recordings through", async () => {
    for (const list of [
      mp3Disguise(hlsPlaylist(["/etc/hostname", "http://127.0.0.1:9/a.wav"])),
      mp3Disguise(concatList(["recording"])),
      Buffer.from(hlsPlaylist(["a.ts"])),
      Buffer.concat([
        Buffer.from([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 0]),
        Buffer.from(hlsPlaylist(["a.ts"])),
      ]),
    ]) {
      expect(() => refuseReferenceLists(list)).toThrow(
        expect.objectContaining({ code: "media_unsupported" }),
      );
    }
    const mp3 = await encodeAudio(recording([0.2, await speak("A real recording."), 0.2]), "mp3");
    expect(() => refuseReferenceLists(mp3)).not.toThrow();
  });

  it("streams a recording to its file, refusing the same lists and keeping no file behind", async () => {
    const mp3 = await encodeAudio(recording([0.2, await speak("A streamed recording."), 0.2]), "mp3");
    // In small pieces, as a blob store's stream comes.
    const pieces = (data: Buffer) =>
      Readable.from(
        [...Array(Math.ceil(data.length / 700)).keys()].map((i) => data.subarray(i * 700, i * 700 + 700)),
      );
    const opened = await openRecording(pieces(mp3), "audio/mpeg", 3600);
    expect(opened.info).toMatchObject({ hasAudio: true, hasVideo: false });
    expect(opened.input.path.startsWith(tmpdir())).toBe(true);
    await opened.close();
    expect(existsSync(opened.input.path)).toBe(false);
    for (const list of [
      mp3Disguise(hlsPlaylist(["/etc/hostname"])),
      mp3Disguise(concatList(["recording"])),
    ]) {
      await expect(openRecording(pieces(list), "audio/mpeg", 3600)).rejects.toMatchObject({
        code: "media_unsupported",
      });
    }
    // A transfer that breaks off midway: its error is the recording's.
    let reads = 0;
    const broken = new Readable({
      read() {
        if (reads++ === 0) this.push(mp3.subarray(0, 1000));
        else this.destroy(new Error("connection reset"));
      },
    });
    await expect(openRecording(broken, "audio/mpeg", 3600)).rejects.toThrow("connection reset");
  });

  it("prefers a configured ffmpeg, then the system's, then the npm package's; and says which runs", async () => {
    expect(chooseFfmpeg("/opt/ffmpeg/bin/ffmpeg")).toEqual({
      path: "/opt/ffmpeg/bin/ffmpeg",
      source: "setting",
    });
    await expect(useFfmpeg("/nonexistent/ffmpeg")).rejects.toThrow(
      /cannot be run from \/nonexistent\/ffmpeg/,
    );
    const chosen = await useFfmpeg();
    if (existsSync(SYSTEM_FFMPEG_PATH))
      expect(chosen).toMatchObject({ path: SYSTEM_FFMPEG_PATH, source: "system" });
    else expect(chosen).toMatchObject({ path: BUNDLED_FFMPEG_PATH, source: "bundled" });
    expect(chosen.version).toMatch(/^ffmpeg version /);
  });

  it("probes with the ffprobe beside the chosen ffmpeg, else the npm package's", async () => {
    chooseFfmpeg(BUNDLED_FFMPEG_PATH);
    expect(ffprobePath()).toBe(BUNDLED_FFPROBE_PATH);
    chooseFfmpeg("/nonexistent/bin/ffmpeg");
    expect(ffprobePath()).toBe(BUNDLED_FFPROBE_PATH);
    const chosen = await useFfmpeg();
    if (existsSync(SYSTEM_FFMPEG_PATH))
      expect(chosen.ffprobe).toBe(join(dirname(SYSTEM_FFMPEG_PATH), "ffprobe"));
    else expect(chosen.ffprobe).toBe(BUNDLED_FFPROBE_PATH);
  });
});
