import type { FileType } from "./files.ts";

/**
 * Kinds that have an extractor today: only these are accepted for upload. Later extractors
 * (image, audio, video) add their kind here when they land.
 */
export const EXTRACTABLE_KINDS: readonly FileType[] = ["pdf", "image"];

/** Image formats the image extractor reads, as sniffed from the bytes. */
export const IMAGE_MIME_TYPES: ReadonlyMap<string, string> = new Map([
  ["image/png", "PNG"],
  ["image/jpeg", "JPEG"],
  ["image/webp", "WebP"],
  ["image/tiff", "TIFF"],
  ["image/gif", "GIF"],
  ["image/bmp", "BMP"],
]);

/** The kind of a file from the MIME type sniffed from its bytes, or null when Locus has no such kind. */
export function kindOfMimeType(mime: string): FileType | null {
  if (mime === "application/pdf") return "pdf";
  if (mime.startsWith("image/")) return IMAGE_MIME_TYPES.has(mime) ? "image" : null;
  if (mime.startsWith("audio/")) return "audio";
  if (mime.startsWith("video/")) return "video";
  return null;
}
