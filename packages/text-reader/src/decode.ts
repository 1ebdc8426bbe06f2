/** Why a text file could not be read. */
export type TextErrorCode = "too_large" | "too_many_lines";

export class TextReadError extends Error {
  constructor(
    readonly code: TextErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "TextReadError";
  }
}

/**
 * The most bytes read as text: the largest upload Locus accepts by default (LOCUS_MAX_UPLOAD_BYTES);
 * the extractor passes the configured one.
 */
export const MAX_TEXT_BYTES = 100 * 1024 * 1024;

/**
 * The text of a file's bytes: UTF-16 little- or big-endian when the file starts with that byte
 * order mark; else UTF-8 (its byte order mark dropped) when the bytes are valid UTF-8; else
 * Windows-1252, the superset of Latin-1 that Windows editors and older web pages write. The 8-bit
 * encodings cannot be told apart from bytes alone, and this one is by far the commonest: "café"
 * in it is then found as "café", where reading it as UTF-8 would have made it "caf�".
 */
export function decodeText(bytes: Uint8Array, maxBytes = MAX_TEXT_BYTES): string {
  if (bytes.byteLength > maxBytes) {
    throw new TextReadError(
      "too_large",
      `The file has ${bytes.byteLength} bytes; text files are read up to ${maxBytes} bytes.`,
    );
  }
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder("utf-16le").decode(bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder("utf-16be").decode(bytes.subarray(2));
  // TextDecoder drops a UTF-8 byte order mark itself (ignoreBOM defaults to false).
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return decodeWindows1252(bytes);
  }
}

/**
 * Windows-1252's characters at 0x80–0x9F, where Latin-1 has control codes (the five it leaves
 * undefined stay those codes). Node's TextDecoder("windows-1252") decodes as Latin-1, so the
 * table is applied here.
 */
const WINDOWS_1252_HIGH =
  "\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f" +
  "\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178";

function decodeWindows1252(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    .toString("latin1")
    .replace(/[\u0080-\u009f]/g, (c) => WINDOWS_1252_HIGH[c.charCodeAt(0) - 0x80] ?? c);
}
