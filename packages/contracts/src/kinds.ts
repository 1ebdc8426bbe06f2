import type { FileType } from "./files.ts";

/**
 * What an extractor runs to read its kind of file: each weighs on a deployment differently
 * (deploy/manifest-checks sizes memory and /tmp from these).
 * - `pdf`: a PDF reading thread per file in flight (pdf.js, Poppler), with OCR for pages without
 *   a text layer unless LOCUS_PDF_OCR=false;
 * - `ocr`: the OCR recognisers, on every file;
 * - `speech`: a speech recogniser per file in flight;
 * - `ffmpeg`: ffmpeg, on the file written whole to /tmp;
 * - `office`: a LibreOffice process per file in flight, on untrusted documents that may link out.
 */
export type ExtractorEngine = "pdf" | "ocr" | "speech" | "ffmpeg" | "office";

/**
 * The one table of kinds of file and their extractors. A kind exists (FileType, and uploads of it
 * are accepted) because it has an extractor here. Its target names the module, the process of the
 * split shape, the bus's consumer group (and RabbitMQ queue) and the Deployment; the upload topics,
 * consumer groups, LOCUS_TARGETS, the split launcher's ports, the all-in-one module and the
 * deployment checks are derived from this table. Order: as FileType lists the kinds.
 */
export const EXTRACTORS = {
  pdf: { target: "extractor-pdf", engines: ["pdf"] },
  image: { target: "extractor-image", engines: ["ocr"] },
  audio: { target: "extractor-audio", engines: ["speech", "ffmpeg"] },
  video: { target: "extractor-video", engines: ["speech", "ffmpeg", "ocr"] },
  document: { target: "extractor-document", engines: ["office", "pdf"] },
} as const satisfies Record<string, { target: `extractor-${string}`; engines: readonly ExtractorEngine[] }>;

export type ExtractorTarget = (typeof EXTRACTORS)[keyof typeof EXTRACTORS]["target"];

/** Every kind of file, in the table's order (FileType is made of these). */
export const FILE_KINDS = Object.keys(EXTRACTORS) as [
  keyof typeof EXTRACTORS,
  ...(keyof typeof EXTRACTORS)[],
];

/** Every extractor's target, in the table's order. */
export const EXTRACTOR_TARGETS: readonly ExtractorTarget[] = Object.values(EXTRACTORS).map((e) => e.target);

/** The targets whose extractor runs `engine`. */
export const extractorTargetsRunning = (engine: ExtractorEngine): ExtractorTarget[] =>
  Object.values(EXTRACTORS)
    .filter((e) => (e.engines as readonly ExtractorEngine[]).includes(engine))
    .map((e) => e.target);

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

/**
 * Office documents, converted to PDF by LibreOffice before they are read; as sniffed from their
 * bytes (OOXML and ODF by their zip contents, RTF by its header; the legacy binary formats share
 * one OLE container, told apart by the file name's extension at upload).
 */
export const OFFICE_MIME_TYPES: ReadonlyMap<string, string> = new Map([
  ["application/vnd.openxmlformats-officedocument.wordprocessingml.document", "DOCX"],
  ["application/vnd.ms-word.document.macroenabled.12", "DOCX"],
  ["application/msword", "DOC"],
  ["application/vnd.oasis.opendocument.text", "ODT"],
  ["application/rtf", "RTF"],
  ["application/vnd.openxmlformats-officedocument.presentationml.presentation", "PPTX"],
  ["application/vnd.ms-powerpoint.presentation.macroenabled.12", "PPTX"],
  ["application/vnd.ms-powerpoint", "PPT"],
  ["application/vnd.oasis.opendocument.presentation", "ODP"],
  ["application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "XLSX"],
  ["application/vnd.ms-excel.sheet.macroenabled.12", "XLSX"],
  ["application/vnd.ms-excel", "XLS"],
  ["application/vnd.oasis.opendocument.spreadsheet", "ODS"],
  // Templates and slide shows: the same formats, opened the same way.
  ["application/vnd.openxmlformats-officedocument.wordprocessingml.template", "DOCX"],
  ["application/vnd.ms-word.template.macroenabled.12", "DOCX"],
  ["application/vnd.ms-word.template.macroenabledtemplate", "DOCX"],
  ["application/vnd.openxmlformats-officedocument.presentationml.slideshow", "PPTX"],
  ["application/vnd.openxmlformats-officedocument.presentationml.template", "PPTX"],
  ["application/vnd.ms-powerpoint.slideshow.macroenabled.12", "PPTX"],
  ["application/vnd.ms-powerpoint.template.macroenabled.12", "PPTX"],
  ["application/vnd.openxmlformats-officedocument.spreadsheetml.template", "XLSX"],
  ["application/vnd.ms-excel.template.macroenabled.12", "XLSX"],
  ["application/vnd.oasis.opendocument.text-template", "ODT"],
  ["application/vnd.oasis.opendocument.presentation-template", "ODP"],
  ["application/vnd.oasis.opendocument.spreadsheet-template", "ODS"],
  // An OLE container whose name did not say which legacy format it holds: the converter tells.
  ["application/x-cfb", "DOC, PPT or XLS"],
]);

/** Text formats read natively (no conversion), with line locators counted as a reader sees the text. */
export const TEXT_MIME_TYPES: ReadonlyMap<string, string> = new Map([
  ["text/plain", "TXT"],
  ["text/markdown", "Markdown"],
  ["text/html", "HTML"],
]);

/** The kind of a file from the MIME type sniffed from its bytes, or null when Locus has no such kind. */
export function kindOfMimeType(mime: string): FileType | null {
  if (mime === "application/pdf") return "pdf";
  if (mime.startsWith("image/")) return IMAGE_MIME_TYPES.has(mime) ? "image" : null;
  if (mime.startsWith("audio/")) return AUDIO_MIME_TYPES.has(mime) ? "audio" : null;
  if (mime.startsWith("video/")) return VIDEO_MIME_TYPES.has(mime) ? "video" : null;
  if (OFFICE_MIME_TYPES.has(mime) || TEXT_MIME_TYPES.has(mime)) return "document";
  return null;
}
