import { fileTypeFromBuffer } from "file-type";
import {
  AUDIO_MIME_TYPES,
  IMAGE_MIME_TYPES,
  OFFICE_MIME_TYPES,
  TEXT_MIME_TYPES,
  VIDEO_MIME_TYPES,
  Errors,
  kindOfMimeType,
  FileType,
} from "@locus/contracts";

/** Bytes read before deciding what a file is; enough for every signature file-type knows. */
export const SNIFF_BYTES = 4100;

const KIND_NAMES: Record<FileType, string> = {
  pdf: "PDF",
  image: `images (${[...IMAGE_MIME_TYPES.values()].join(", ")})`,
  audio: `audio (${[...new Set(AUDIO_MIME_TYPES.values())].join(", ")})`,
  video: `video (${[...new Set(VIDEO_MIME_TYPES.values())].join(", ")})`,
  document: `documents (${[
    ...new Set([...OFFICE_MIME_TYPES.values()].filter((name) => !name.includes(" or "))),
    ...TEXT_MIME_TYPES.values(),
  ].join(", ")})`,
};
const describe = (kinds: readonly FileType[]) => kinds.map((k) => KIND_NAMES[k]).join(", ");

/**
 * A TIFF by its first four bytes alone. file-type also reads the first directory, to tell camera raw
 * formats from plain TIFF, and gives up when it lies beyond the bytes sniffed: scanners and image
 * libraries often write it at the end of the file, after the pages.
 */
function tiffByMagic(head: Buffer): { mime: string } | undefined {
  const magic = head.subarray(0, 4).toString("hex");
  // Little- and big-endian TIFF, and BigTIFF.
  return ["49492a00", "4d4d002a", "49492b00", "4d4d002b"].includes(magic)
    ? { mime: "image/tiff" }
    : undefined;
}

/** The legacy binary office formats all live in one OLE container: the name's extension tells which. */
const OLE_TYPES_BY_EXTENSION: Record<string, string> = {
  doc: "application/msword",
  dot: "application/msword",
  xls: "application/vnd.ms-excel",
  xlt: "application/vnd.ms-excel",
  ppt: "application/vnd.ms-powerpoint",
  pps: "application/vnd.ms-powerpoint",
  pot: "application/vnd.ms-powerpoint",
};

/** An OOXML package's main part lives in a folder named for its application. */
const OOXML_TYPES_BY_FOLDER: Record<string, string> = {
  word: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xl: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  ppt: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
};

/**
 * An OOXML document file-type took for a plain zip: it decides from `[Content_Types].xml`, which
 * LibreOffice and others write last, beyond the bytes sniffed. The names of the entries stored
 * first tell instead (`xl/workbook.xml`: a workbook). Each local file header is found by its
 * signature, so entries whose sizes follow their data are read past too.
 */
function ooxmlByEntryNames(head: Buffer): { mime: string } | undefined {
  for (
    let at = head.indexOf("PK\x03\x04");
    at >= 0 && at + 30 <= head.length;
    at = head.indexOf("PK\x03\x04", at + 4)
  ) {
    const nameLength = head.readUInt16LE(at + 26);
    const name = head.toString("latin1", at + 30, Math.min(head.length, at + 30 + nameLength));
    const folder = name.split("/")[0] ?? "";
    const mime = name.includes("/") ? OOXML_TYPES_BY_FOLDER[folder] : undefined;
    if (mime) return { mime };
  }
  return undefined;
}

const MARKDOWN_EXTENSIONS = new Set(["md", "markdown", "mdown", "mkd", "mkdn"]);
const HTML_EXTENSIONS = new Set(["html", "htm", "xhtml"]);

const extensionOf = (name: string | undefined) => /\.([a-z0-9]+)$/i.exec(name ?? "")?.[1]?.toLowerCase();

/**
 * Control characters text does not hold: all but tab, line breaks, form feed and escape (logs keep
 * their terminal colours). Binary formats hold them within their first bytes.
 */
// eslint-disable-next-line no-control-regex
const BINARY_CONTROLS = /[\u0000-\u0008\u000b\u000e-\u001a\u001c-\u001f\u007f]/;

/** Bytes Windows-1252 leaves undefined: text in it never holds them. */
const WINDOWS_1252_UNDEFINED = new Set([0x81, 0x8d, 0x8f, 0x90, 0x9d]);

/**
 * Whether the first bytes are text: UTF-16 with its byte order mark, UTF-8 (the head may end inside
 * a character), or else Windows-1252 (Latin-1's superset, as the text reader decodes it), with no
 * binary control character (BINARY_CONTROLS).
 */
function looksLikeText(head: Buffer, whole: boolean): boolean {
  const utf16 = utf16Order(head);
  // A character cut at the end of the head is not an error; up to three bytes of one.
  let text: string | undefined;
  for (let cut = 0; cut <= (whole ? 0 : 3) && text === undefined; cut += 1) {
    try {
      text = new TextDecoder(utf16 ?? "utf-8", { fatal: true }).decode(head.subarray(0, head.length - cut));
    } catch {
      text = undefined;
    }
  }
  if (text !== undefined) return !BINARY_CONTROLS.test(text);
  if (utf16) return false;
  return (
    !head.some((byte) => WINDOWS_1252_UNDEFINED.has(byte)) && !BINARY_CONTROLS.test(head.toString("latin1"))
  );
}

/**
 * file-type's answer. It inflates a zip's first entries to look inside, and throws when one is cut
 * by the end of the bytes sniffed: then the zip is still a zip, for ooxmlByEntryNames to look into.
 */
async function fileTypeOf(head: Buffer): Promise<{ mime: string } | undefined> {
  try {
    return await fileTypeFromBuffer(head);
  } catch {
    return head.subarray(0, 4).toString("latin1") === "PK\x03\x04" ? { mime: "application/zip" } : undefined;
  }
}

/** The UTF-16 a byte order mark announces, if the head starts with one. */
function utf16Order(head: Buffer): "utf-16le" | "utf-16be" | undefined {
  if (head[0] === 0xff && head[1] === 0xfe) return "utf-16le";
  if (head[0] === 0xfe && head[1] === 0xff) return "utf-16be";
  return undefined;
}

/** An HTML page by its first markup (after a byte order mark, blank space, comments and an XML declaration). */
function startsLikeHtml(head: Buffer): boolean {
  const start = head
    .toString("utf8", 0, Math.min(head.length, 1024))
    .replace(/^\uFEFF/, "")
    .replace(/^(\s|<!--[\s\S]*?-->|<\?xml[\s\S]*?\?>)*/, "")
    .toLowerCase();
  return start.startsWith("<!doctype html") || start.startsWith("<html");
}

/**
 * The type of a text file, which has no signature: HTML by its first markup or its extension,
 * Markdown by its extension (its syntax is plain text too), anything else plain text.
 */
function textType(head: Buffer, name: string | undefined): string {
  const extension = extensionOf(name);
  if (startsLikeHtml(head) || (extension && HTML_EXTENSIONS.has(extension))) return "text/html";
  if (extension && MARKDOWN_EXTENSIONS.has(extension)) return "text/markdown";
  return "text/plain";
}

/**
 * What can be known about a file before it is stored: its kind and type, sniffed from its first
 * bytes. The name is only consulted where the bytes cannot tell: which legacy office format an OLE
 * container holds, and Markdown among text files. `whole` says the head is the whole file.
 */
export async function sniffKind(
  head: Buffer,
  name?: string,
  whole = head.length < SNIFF_BYTES,
): Promise<{ kind: FileType; mimeType: string }> {
  if (head.length === 0) throw Errors.fileEmpty();
  // UTF-16 text first: its byte order mark looks like an MPEG audio frame's sync to file-type.
  if (utf16Order(head) && looksLikeText(head, whole)) {
    const mimeType = textType(head, name);
    return { kind: "document", mimeType };
  }
  let detected = (await fileTypeOf(head)) ?? tiffByMagic(head);
  if (detected?.mime === "application/zip") detected = ooxmlByEntryNames(head) ?? detected;
  if (detected?.mime === "application/x-cfb") {
    const legacy = OLE_TYPES_BY_EXTENSION[extensionOf(name) ?? ""];
    if (legacy) detected = { mime: legacy };
  }
  // XHTML starts with an XML declaration, which file-type names XML. And a few letters at the start
  // of a text are an image's or a recording's signature to file-type ("BM" a bitmap, "ID3" an MP3,
  // "GIF89a"): a real one holds binary bytes right after, so a head that is all text is text.
  const mayBeText =
    !detected ||
    (detected.mime === "application/xml" && textType(head, name) === "text/html") ||
    ["image", "audio", "video"].includes(kindOfMimeType(detected.mime) ?? "");
  if (mayBeText && looksLikeText(head, whole)) detected = { mime: textType(head, name) };
  const kind = detected ? kindOfMimeType(detected.mime) : null;
  if (!detected || !kind) {
    const what = detected ? `${detected.mime} files are` : "This kind of file is";
    throw Errors.unsupportedMediaType(what, describe(FileType.options));
  }
  return { kind, mimeType: detected.mime };
}
