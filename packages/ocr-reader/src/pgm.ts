/** The grey pages Locus hands its recognisers: binary PGM, a byte a pixel, read and written here. */

/** A grey image: one byte a pixel, rows top to bottom. */
export interface GreyImage {
  width: number;
  height: number;
  pixels: Uint8Array;
}

/** An 8-bit binary PGM's size and pixels (the pages Locus prepares), or null for anything else. */
export function readPgm(data: Uint8Array): GreyImage | null {
  const head = Buffer.from(data.buffer, data.byteOffset, Math.min(64, data.byteLength)).toString("latin1");
  const header = /^P5\s+(\d+)\s+(\d+)\s+255\s/.exec(head);
  if (!header) return null;
  const width = Number(header[1]);
  const height = Number(header[2]);
  const pixels = data.subarray(header[0].length);
  if (width === 0 || height === 0 || pixels.length < width * height) return null;
  return { width, height, pixels: pixels.subarray(0, width * height) };
}

/** Grey pixels (a byte a pixel, rows top to bottom) as a binary PGM. */
export function toPgm(width: number, height: number, pixels: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from(`P5\n${width} ${height}\n255\n`, "latin1"), pixels]);
}
