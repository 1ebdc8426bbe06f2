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
 * The text of a file's bytes: UTF-8 (its byte order mark dropped), or UTF-16 little- or big-endian
 * when the file starts with that byte order mark. Anything else is read as UTF-8, each invalid
 * sequence becoming U+FFFD: legacy 8-bit encodings cannot be told apart reliably from bytes alone,
 * and their ASCII letters (most of what is searched for) still come through whole.
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
  return new TextDecoder("utf-8").decode(bytes);
}
