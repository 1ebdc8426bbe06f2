import type { FileType } from "./files.ts";

/** Kinds that have an extractor: only these are accepted for upload. */
export const EXTRACTABLE_KINDS: readonly FileType[] = ["pdf", "image", "audio", "video"];

/** Image formats the image extractor reads, as sniffed from the bytes. */
export const IMAGE_MIME_TYPES: ReadonlyMap<string, string> = new Map([
  ["image/png", "PNG"],
  ["image/jpeg", "JPEG"],
  ["image/webp", "WebP"],
  ["image/tiff", "TIFF"],
  ["image/gif", "GIF"],
  ["image/bmp", "BMP"],
]);

/** Audio formats the audio extractor decodes (with ffmpeg), as sniffed from the bytes. */
export const AUDIO_MIME_TYPES: ReadonlyMap<string, string> = new Map([
  ["audio/mpeg", "MP3"],
  ["audio/wav", "WAV"],
  ["audio/x-m4a", "M4A"],
  ["audio/mp4", "M4A"],
  ["audio/aac", "AAC"],
  ["audio/ogg", "OGG"],
  ["audio/ogg; codecs=opus", "Opus"],
  ["audio/opus", "Opus"],
  ["audio/flac", "FLAC"],
  ["audio/x-flac", "FLAC"],
]);

/** Video formats the video extractor decodes (with ffmpeg), as sniffed from the bytes. */
export const VIDEO_MIME_TYPES: ReadonlyMap<string, string> = new Map([
  ["video/mp4", "MP4"],
  ["video/x-m4v", "MP4"],
  ["video/quicktime", "MOV"],
  ["video/matroska", "MKV"],
  ["video/x-matroska", "MKV"],
  ["video/webm", "WebM"],
]);

/** The kind of a file from the MIME type sniffed from its bytes, or null when Locus has no such kind. */
export function kindOfMimeType(mime: string): FileType | null {
  if (mime === "application/pdf") return "pdf";
  if (mime.startsWith("image/")) return IMAGE_MIME_TYPES.has(mime) ? "image" : null;
  if (mime.startsWith("audio/")) return AUDIO_MIME_TYPES.has(mime) ? "audio" : null;
  if (mime.startsWith("video/")) return VIDEO_MIME_TYPES.has(mime) ? "video" : null;
  return null;
}
