import { open } from "node:fs/promises";
import { runFfmpeg } from "./ffmpeg.ts";
import { MediaReadError } from "./media-errors.ts";
import { inputArgs, type MediaInput } from "./media-input.ts";

export interface MediaInfo {
  /** The container's declared duration, in seconds; null when it declares none. */
  durationS: number | null;
  hasAudio: boolean;
  hasVideo: boolean;
}

/**
 * What a media file declares: its duration and its streams, from ffmpeg's description of the input
 * (ffmpeg reads headers only when given no output). A file ffmpeg cannot open is corrupt.
 */
export async function probeMedia(input: MediaInput): Promise<MediaInfo> {
  const { stderr } = await runFfmpeg(inputArgs(input));
  const described = stderr.indexOf("Input #0");
  if (described < 0) {
    throw new MediaReadError("media_corrupt", "The recording is damaged or not a format Locus can decode.");
  }
  const description = stderr.slice(described);
  const d = /Duration: (\d+):(\d\d):(\d\d(?:\.\d+)?)/.exec(description);
  // A WAV's own header says how much sound it holds; ffmpeg goes by the bytes present, so a WAV cut
  // off in transfer would pass for a shorter whole one.
  const durationS =
    (await wavDeclaredSeconds(input.path)) ??
    (d ? Number(d[1]) * 3600 + Number(d[2]) * 60 + Number(d[3]) : null);
  // Cover art in an MP3 or M4A is a "video" stream of one picture: not a video.
  const videoStreams = description
    .split("\n")
    .filter((l) => /Stream #\S+.*: Video:/.test(l) && !/attached pic/.test(l));
  return {
    durationS,
    hasAudio: /Stream #\S+.*: Audio:/.test(description),
    hasVideo: videoStreams.length > 0,
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
