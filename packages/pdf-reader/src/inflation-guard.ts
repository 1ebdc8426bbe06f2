import { constants, inflateSync } from "node:zlib";

/**
 * The most bytes one compressed stream of a PDF may expand to. pdf.js inflates a stream whole,
 * into one buffer that doubles as it grows and lives outside the JavaScript heap (so the worker's
 * heap limit does not see it): a 2 KB stream deflated twice can ask for gigabytes. Real pages stay
 * far below this; a 600 dpi A4 colour scan stored with Flate is about 100 MB.
 */
export const MAX_INFLATED_STREAM_BYTES = 256 * 1024 * 1024;

/** The filters of a stream dictionary, in order ("/FlateDecode", "/Fl", ...), from its text. */
function filtersOf(dictionary: string): string[] {
  const m = /\/Filter\s*(\[[^\]]*\]|\/[A-Za-z0-9]+)/.exec(dictionary);
  return m?.[1] ? (m[1].match(/\/[A-Za-z0-9]+/g) ?? []) : [];
}

const isFlate = (filter: string) => filter === "/FlateDecode" || filter === "/Fl";

/**
 * Finds a stream that inflates (through its leading Flate filters) to more than `maxBytes`; returns
 * the object's byte offset, or null when there is none. Reads the file's bytes as written, before
 * pdf.js: streams never sit inside object streams, so every one is visible here. Streams that do
 * not inflate (damaged, encrypted, other filters) are left to pdf.js, which has its own answers.
 * Each stage stops at `maxBytes`, so the check itself never holds more than that.
 */
export function findInflationBomb(data: Uint8Array, maxBytes = MAX_INFLATED_STREAM_BYTES): number | null {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  for (
    let at = bytes.indexOf("stream", 0, "latin1");
    at >= 0;
    at = bytes.indexOf("stream", at + 6, "latin1")
  ) {
    // "endstream" holds the keyword too; a stream's own keyword follows its dictionary's ">>".
    const before = bytes.toString("latin1", Math.max(0, at - 4096), at);
    if (!/>>\s*$/.test(before)) continue;
    const objectStart = before.lastIndexOf(" obj");
    const dictionary = objectStart >= 0 ? before.slice(objectStart) : before;
    const filters = filtersOf(dictionary);
    const flates = filters.findIndex((f) => !isFlate(f));
    const count = flates < 0 ? filters.length : flates;
    if (count === 0) continue;
    let start = at + 6;
    if (bytes[start] === 0x0d) start++;
    if (bytes[start] === 0x0a) start++;
    const end = bytes.indexOf("endstream", start, "latin1");
    let stage: Buffer = bytes.subarray(start, end < 0 ? bytes.length : end);
    try {
      for (let i = 0; i < count; i++) {
        // Z_SYNC_FLUSH: a stream cut short still gives what it holds, as pdf.js reads it.
        stage = inflateSync(stage, { maxOutputLength: maxBytes, finishFlush: constants.Z_SYNC_FLUSH });
      }
    } catch (err) {
      if ((err as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") {
        return Math.max(0, at - 4096) + (objectStart >= 0 ? objectStart : 0);
      }
      // Not inflatable here: pdf.js decides what it is.
    }
  }
  return null;
}
