// bmp-js ships no types, and this declaration must travel with this file into every program that
// compiles it.
// eslint-disable-next-line @typescript-eslint/triple-slash-reference
/// <reference path="./bmp-js.d.ts" />
import bmp from "bmp-js";
import { FileRejectedError } from "@locus/contracts";
import sharp, { type Metadata, type Sharp } from "sharp";
import { toPgm } from "./pgm.ts";

export type ImageErrorCode = "image_corrupt" | "image_too_large" | "image_unsupported";

/** Why an image cannot be read, in words a person can act on; retrying will not help. */
export class ImageReadError extends FileRejectedError {
  declare readonly code: ImageErrorCode;
  constructor(code: ImageErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = "ImageReadError";
  }
}

export interface ImageLimits {
  /** Pixels of one page beyond which an image is refused: a few bytes can declare billions. */
  maxPixels: number;
  /** Pages of a multi-page TIFF beyond which it is refused. */
  maxPages: number;
  /** Pixels handed to the recogniser for one page; larger pages are scaled down to this. */
  maxOcrPixels: number;
}

export const DEFAULT_IMAGE_LIMITS: ImageLimits = {
  maxPixels: 100_000_000,
  maxPages: 500,
  maxOcrPixels: 16_000_000,
};

/** A page made ready for the recogniser: upright, grey, at a size fit for reading. */
export interface PreparedPage {
  /**
   * The page as a binary greyscale PNM (PGM): a header and the pixels as they are, which the
   * recogniser reads without decompressing (a PNG would cost an encode here and a decode there).
   */
  pgm: Buffer;
  width: number;
  height: number;
  /** Prepared pixels per pixel of the page as displayed (after its EXIF orientation). */
  scale: number;
  /** The page as displayed, in its own pixels: what locators point into. */
  originalWidth: number;
  originalHeight: number;
}

export interface OpenedImage {
  format: string;
  pageCount: number;
  /**
   * Page `n` (1-based), scaled by `upscale` (for small text) within the OCR pixel budget.
   * Throws ImageReadError when the page's pixels turn out damaged.
   */
  page(n: number, upscale?: number): Promise<PreparedPage>;
}

/** Formats Locus reads, by sharp's name for them; only a TIFF's every page is read. */
const FORMATS = new Set(["jpeg", "png", "webp", "tiff", "gif"]);

function isBmp(data: Uint8Array): boolean {
  return data.length >= 2 && data[0] === 0x42 && data[1] === 0x4d;
}

function tooLarge(width: number, height: number, limits: ImageLimits): ImageReadError {
  const mp = (n: number) => `${Math.round(n / 1e6)} megapixels`;
  return new ImageReadError(
    "image_too_large",
    `The image is ${width} × ${height} pixels (${mp(width * height)}); Locus reads images up to ${mp(limits.maxPixels)}.`,
  );
}

function corrupt(cause: unknown): ImageReadError {
  return new ImageReadError("image_corrupt", "The image is damaged or truncated and cannot be read.", {
    cause,
  });
}

/**
 * Decodes a BMP (which sharp does not read) to raw pixels, after checking from its header that
 * the pixel count is within the limit.
 */
function decodeBmp(data: Buffer, limits: ImageLimits): { raw: Buffer; width: number; height: number } {
  if (data.length < 26) throw corrupt(new Error("BMP header cut short"));
  const width = data.readInt32LE(18);
  const height = Math.abs(data.readInt32LE(22));
  if (width <= 0 || height <= 0) throw corrupt(new Error("BMP with no pixels"));
  if (width * height > limits.maxPixels) throw tooLarge(width, height, limits);
  let decoded: ReturnType<typeof bmp.decode>;
  try {
    decoded = bmp.decode(data);
  } catch (err) {
    throw corrupt(err);
  }
  // bmp-js gives alpha, blue, green, red; sharp wants red, green, blue.
  const raw = Buffer.alloc(decoded.width * decoded.height * 3);
  for (let i = 0, o = 0; o < raw.length; i += 4, o += 3) {
    raw[o] = decoded.data[i + 3] ?? 0;
    raw[o + 1] = decoded.data[i + 2] ?? 0;
    raw[o + 2] = decoded.data[i + 1] ?? 0;
  }
  return { raw, width: decoded.width, height: decoded.height };
}

/** Pixels already decoded (a page another reader drew): one byte a pixel, rows top to bottom. */
export interface GreyPixels {
  grey: Uint8Array;
  width: number;
  height: number;
}

/** Where an image's pages come from, once its header has been checked. */
interface PageSource {
  format: string;
  pageCount: number;
  /** The first page's size as displayed. */
  width: number;
  height: number;
  /** A decoder for page `n`. */
  decode(n: number): Sharp;
  /** Page `n`'s size as displayed (TIFF pages may differ). */
  measure(n: number): Promise<{ width: number; height: number }>;
}

/**
 * Opens an image held in memory: a file's bytes, or grey pixels already decoded. The header is
 * read first: an unknown format, a damaged header or a page past the pixel limit is refused before
 * any pixel is decoded, so a decompression bomb costs nothing.
 */
export async function openImage(
  input: Buffer | GreyPixels,
  limits: ImageLimits = DEFAULT_IMAGE_LIMITS,
): Promise<OpenedImage> {
  const source = Buffer.isBuffer(input) ? await inspect(input, limits) : decoded(input);
  if (source.width * source.height > limits.maxPixels) throw tooLarge(source.width, source.height, limits);
  return {
    format: source.format,
    pageCount: source.pageCount,
    async page(n, upscale = 1) {
      try {
        const size = n === 1 ? { width: source.width, height: source.height } : await source.measure(n);
        if (size.width * size.height > limits.maxPixels) throw tooLarge(size.width, size.height, limits);
        // Within the OCR budget: small text goes up by `upscale`, huge pages come down.
        const scale = Math.min(upscale, Math.sqrt(limits.maxOcrPixels / (size.width * size.height)));
        const w = Math.max(1, Math.round(size.width * scale));
        const h = Math.max(1, Math.round(size.height * scale));
        let image = source.decode(n).rotate().greyscale();
        if (w !== size.width || h !== size.height) {
          image = image.resize(w, h, { fit: "fill", kernel: "lanczos3" });
        }
        // No contrast stretching: on a noisy scan it stretches the noise too, and the recogniser's
        // own thresholding copes better with the grey levels as they are.
        const { data, info } = await image.raw().toBuffer({ resolveWithObject: true });
        return {
          pgm: toPgm(info.width, info.height, data),
          width: w,
          height: h,
          scale: w / size.width,
          originalWidth: size.width,
          originalHeight: size.height,
        };
      } catch (err) {
        if (err instanceof ImageReadError) throw err;
        if (/pixel limit/i.test(String((err as Error).message))) {
          throw new ImageReadError(
            "image_too_large",
            `A page of the image is larger than Locus reads (up to ${Math.round(limits.maxPixels / 1e6)} megapixels).`,
          );
        }
        throw corrupt(err);
      }
    },
  };
}

function decoded({ grey, width, height }: GreyPixels): PageSource {
  if (grey.length !== width * height) throw corrupt(new Error("pixel count does not match the size"));
  const pixels = Buffer.from(grey.buffer, grey.byteOffset, grey.byteLength);
  const size = { width, height };
  return {
    format: "grey",
    pageCount: 1,
    ...size,
    decode: () => sharp(pixels, { raw: { width, height, channels: 1 } }),
    measure: () => Promise.resolve(size),
  };
}

/** Reads a file's header (sharp reads headers without decoding; BMP's is read here). */
async function inspect(input: Buffer, limits: ImageLimits): Promise<PageSource> {
  if (input.length === 0) throw corrupt(new Error("empty file"));
  if (isBmp(input)) {
    const bmp = decodeBmp(input, limits);
    const size = { width: bmp.width, height: bmp.height };
    return {
      format: "bmp",
      pageCount: 1,
      ...size,
      decode: () => sharp(bmp.raw, { raw: { ...size, channels: 3 } }),
      measure: () => Promise.resolve(size),
    };
  }
  let meta: Metadata;
  try {
    meta = await sharp(input, { limitInputPixels: false }).metadata();
  } catch (err) {
    throw corrupt(err);
  }
  if (!FORMATS.has(meta.format)) {
    throw new ImageReadError("image_unsupported", `Locus does not read ${meta.format} images.`);
  }
  // Only a TIFF's pages are all read: a GIF's or a WebP's further frames are animation.
  const pageCount = meta.format === "tiff" ? (meta.pages ?? 1) : 1;
  if (pageCount > limits.maxPages) {
    throw new ImageReadError(
      "image_too_large",
      `The image has ${pageCount} pages; Locus reads up to ${limits.maxPages} pages of one TIFF.`,
    );
  }
  return {
    format: meta.format,
    pageCount,
    ...displayedSize(meta),
    decode: (n) =>
      sharp(input, { limitInputPixels: limits.maxPixels, failOn: "warning", page: n - 1, pages: 1 }),
    measure: async (n) =>
      displayedSize(await sharp(input, { page: n - 1, limitInputPixels: false }).metadata()),
  };
}

/** The size of an image as displayed: EXIF orientations 5–8 turn it a quarter, swapping its sides. */
function displayedSize(meta: Metadata): { width: number; height: number } {
  const w = meta.width;
  const h = meta.pageHeight ?? meta.height;
  return (meta.orientation ?? 1) >= 5 ? { width: h, height: w } : { width: w, height: h };
}
