// bmp-js ships no types, and this declaration must travel with this file into every program that
// compiles it.
// eslint-disable-next-line @typescript-eslint/triple-slash-reference
/// <reference path="./bmp-js.d.ts" />
import bmp from "bmp-js";
import sharp, { type Metadata, type Sharp, type SharpOptions } from "sharp";

export type ImageErrorCode = "image_corrupt" | "image_too_large" | "image_unsupported";

/** Why an image cannot be read, in words a person can act on; retrying will not help. */
export class ImageReadError extends Error {
  constructor(
    readonly code: ImageErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
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
  png: Buffer;
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

/**
 * Opens an image held in memory. The header is read first: an unknown format, a damaged header or
 * a page past the pixel limit is refused before any pixel is decoded, so a decompression bomb
 * costs nothing.
 */
export async function openImage(
  input: Buffer,
  limits: ImageLimits = DEFAULT_IMAGE_LIMITS,
): Promise<OpenedImage> {
  if (input.length === 0) throw corrupt(new Error("empty file"));
  let source: () => Sharp;
  let format: string;
  let pageCount = 1;
  let width: number;
  let height: number;

  if (isBmp(input)) {
    const decoded = decodeBmp(input, limits);
    source = () => sharp(decoded.raw, { raw: { width: decoded.width, height: decoded.height, channels: 3 } });
    format = "bmp";
    width = decoded.width;
    height = decoded.height;
  } else {
    let meta: Metadata;
    try {
      meta = await sharp(input, { limitInputPixels: false }).metadata();
    } catch (err) {
      throw corrupt(err);
    }
    if (!FORMATS.has(meta.format)) {
      throw new ImageReadError("image_unsupported", `Locus does not read ${meta.format} images.`);
    }
    format = meta.format;
    ({ width, height } = displayedSize(meta));
    if (format === "tiff") pageCount = meta.pages ?? 1;
    if (pageCount > limits.maxPages) {
      throw new ImageReadError(
        "image_too_large",
        `The image has ${pageCount} pages; Locus reads up to ${limits.maxPages} pages of one TIFF.`,
      );
    }
    source = () => sharp(input, { limitInputPixels: limits.maxPixels, failOn: "warning" });
  }
  if (width * height > limits.maxPixels) throw tooLarge(width, height, limits);

  return {
    format,
    pageCount,
    async page(n, upscale = 1) {
      try {
        // TIFF pages may differ in size; every other format has one page, measured above.
        const size =
          format === "tiff" && n > 1
            ? displayedSize(await sharp(input, { page: n - 1, limitInputPixels: false }).metadata())
            : { width, height };
        if (size.width * size.height > limits.maxPixels) throw tooLarge(size.width, size.height, limits);
        // Within the OCR budget: small text goes up by `upscale`, huge pages come down.
        const scale = Math.min(upscale, Math.sqrt(limits.maxOcrPixels / (size.width * size.height)));
        const w = Math.max(1, Math.round(size.width * scale));
        const h = Math.max(1, Math.round(size.height * scale));
        let image = (format === "tiff" ? sharp(input, pageOptions(limits, n)) : source())
          .rotate()
          .greyscale();
        if (w !== size.width || h !== size.height)
          image = image.resize(w, h, { fit: "fill", kernel: "lanczos3" });
        // No contrast stretching: on a noisy scan it stretches the noise too, and the recogniser's
        // own thresholding copes better with the grey levels as they are. PNG level 1 is quick.
        const png = await image.png({ compressionLevel: 1 }).toBuffer();
        return {
          png,
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

/** The size of an image as displayed: EXIF orientations 5–8 turn it a quarter, swapping its sides. */
function displayedSize(meta: Metadata): { width: number; height: number } {
  const w = meta.width;
  const h = meta.pageHeight ?? meta.height;
  return (meta.orientation ?? 1) >= 5 ? { width: h, height: w } : { width: w, height: h };
}

function pageOptions(limits: ImageLimits, n: number): SharpOptions {
  return { limitInputPixels: limits.maxPixels, failOn: "warning", page: n - 1, pages: 1 };
}
