import { open } from "node:fs/promises";
import { AUDIO_MIME_TYPES, VIDEO_MIME_TYPES } from "@locus/contracts";
import { MediaReadError } from "./media-errors.ts";

/**
 * ffmpeg's demuxer for each format Locus accepts (the formats, and the MIME types sniffed as each,
 * are @locus/contracts'). ffmpeg is always told which one: left to guess from the content, it
 * opens a text file behind an ID3 tag as an HLS playlist and follows its URLs.
 */
const DEMUXER_OF_FORMAT: Readonly<Record<string, string>> = {
  MP3: "mp3",
  WAV: "wav",
  M4A: "mov",
  AAC: "aac",
  OGG: "ogg",
  Opus: "ogg",
  FLAC: "flac",
  MP4: "mov",
  MOV: "mov",
  MKV: "matroska",
  WebM: "matroska",
};

/** A recording on disk and the demuxer that reads it. */
export interface MediaInput {
  path: string;
  demuxer: string;
}

/** The input for a recording of the given (sniffed) MIME type; refuses a type Locus has no demuxer for. */
export function mediaInput(path: string, mimeType: string): MediaInput {
  const format = AUDIO_MIME_TYPES.get(mimeType) ?? VIDEO_MIME_TYPES.get(mimeType);
  const demuxer = format === undefined ? undefined : DEMUXER_OF_FORMAT[format];
  if (!demuxer) {
    throw new MediaReadError("media_unsupported", `Locus does not read ${mimeType} recordings.`);
  }
  return { path, demuxer };
}

/**
 * ffmpeg's options for reading an upload: its demuxer named (no guessing from the content), and
 * only the local file protocol allowed, so nothing inside a file can make ffmpeg open a URL, a
 * pipe, a device or a `concat:`/`subfile:` of other files.
 */
export function inputArgs(input: MediaInput): string[] {
  return ["-protocol_whitelist", "file", "-f", input.demuxer, "-i", input.path];
}

/** Text that makes a file a list of other files: HLS and DASH-like playlists, ffmpeg concat scripts. */
const REFERENCE_LISTS = /^(?:#EXTM3U|#EXT-X-|ffconcat version|file\s+['"/]|<\?xml[^>]*>\s*<MPD)/i;

/** How much of the content is looked at for a list: its first lines. */
const LIST_HEAD = 512;

/**
 * Where the content after an ID3v2 tag may start: its size is 4 "synchsafe" 7-bit bytes, and a
 * footer flag adds 10 bytes that some readers skip and others do not (the gap is where a playlist
 * hides behind an MP3 frame header: a sniffer sees MP3, a content-guessing ffmpeg sees HLS).
 */
function afterId3(head: Buffer): number[] {
  if (head.length < 10 || head.toString("latin1", 0, 3) !== "ID3") return [0];
  const size =
    ((head[6]! & 0x7f) << 21) | ((head[7]! & 0x7f) << 14) | ((head[8]! & 0x7f) << 7) | (head[9]! & 0x7f);
  return [0, 10 + size, 20 + size];
}

/**
 * Refuses a playlist or concat list dressed as a recording (an ID3 tag before it makes it sniff as
 * MP3): Locus reads the bytes it was given, never files or URLs that they name.
 */
export function refuseReferenceLists(data: Buffer): void {
  for (const start of afterId3(data)) refuseListHead(data.subarray(start, start + LIST_HEAD));
}

/** refuseReferenceLists for a recording already on disk: reads only the few bytes it looks at. */
export async function refuseReferenceListsIn(path: string): Promise<void> {
  const file = await open(path, "r");
  try {
    const id3 = Buffer.alloc(10);
    const { bytesRead } = await file.read(id3, 0, id3.length, 0);
    for (const start of afterId3(id3.subarray(0, bytesRead))) {
      const head = Buffer.alloc(LIST_HEAD);
      const { bytesRead: read } = await file.read(head, 0, head.length, start);
      refuseListHead(head.subarray(0, read));
    }
  } finally {
    await file.close();
  }
}

function refuseListHead(head: Buffer): void {
  const text = head
    .toString("utf8")
    .replace(/^\uFEFF/, "")
    .trimStart();
  if (REFERENCE_LISTS.test(text)) {
    throw new MediaReadError(
      "media_unsupported",
      "The file is a playlist or a list of other files, not a recording; Locus does not follow the files or links it names. Upload the recording itself.",
    );
  }
}
