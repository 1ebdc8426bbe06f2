import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { crc32, deflateSync } from "node:zlib";
import { createCanvas, GlobalFonts } from "@napi-rs/canvas";
import PDFDocument from "pdfkit";
import sharp, { type Sharp } from "sharp";

/**
 * A sans-serif font shipped inside pdfjs-dist, so images are drawn the same on every machine
 * whatever fonts it has installed.
 */
const FONT_FAMILY = "LocusTestSans";
let fontRegistered = false;
function registerFont(): void {
  if (fontRegistered) return;
  const pdfjs = dirname(createRequire(import.meta.url).resolve("pdfjs-dist/package.json"));
  GlobalFonts.registerFromPath(join(pdfjs, "standard_fonts", "LiberationSans-Regular.ttf"), FONT_FAMILY);
  fontRegistered = true;
}

export type ImageFormat = "png" | "jpeg" | "webp" | "tiff" | "gif" | "bmp";

export interface TextImageSpec {
  /** Lines drawn top to bottom; "" leaves a blank line (which does not count as a line). */
  lines: string[];
  width?: number;
  height?: number;
  /** Font size in pixels: 150 dpi text at 11 pt is about 23 px. */
  fontPx?: number;
  /** Turned by this many degrees (clockwise), on a white background. */
  rotateDeg?: number;
  /** Grey-level noise added to every pixel, up to ± this many levels (0–255). */
  noise?: number;
  format?: ImageFormat;
  /** JPEG or WebP quality, 1–100. */
  quality?: number;
  /** An EXIF orientation tag to store (the pixels are turned so that it displays upright). */
  exifOrientation?: 6 | 8;
}

export interface TextImage {
  data: Buffer;
  /** Where each non-blank line was drawn, in the upright image's pixels, before any turn. */
  lineBoxes: { text: string; x: number; y: number; width: number; height: number }[];
  width: number;
  height: number;
}

/** A small repeatable random source, so a noisy image is the same on every run. */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Draws the lines as black text on white, the way a page or a screenshot shows them. */
function drawText(spec: TextImageSpec): {
  grey: Buffer;
  width: number;
  height: number;
  lineBoxes: TextImage["lineBoxes"];
} {
  registerFont();
  const fontPx = spec.fontPx ?? 23;
  const lineHeight = Math.round(fontPx * 1.6);
  const margin = Math.round(fontPx * 3);
  const width = spec.width ?? 1240;
  const height = spec.height ?? Math.max(margin * 2 + lineHeight * spec.lines.length, 200);
  const canvas = createCanvas(width, height);
  const g = canvas.getContext("2d");
  g.fillStyle = "#ffffff";
  g.fillRect(0, 0, width, height);
  g.fillStyle = "#000000";
  g.font = `${fontPx}px ${FONT_FAMILY}`;
  g.textBaseline = "alphabetic";
  const lineBoxes: TextImage["lineBoxes"] = [];
  spec.lines.forEach((text, i) => {
    const baseline = margin + i * lineHeight + fontPx;
    g.fillText(text, margin, baseline);
    if (text.trim() === "") return;
    const m = g.measureText(text);
    lineBoxes.push({
      text,
      x: margin,
      y: Math.round(baseline - m.actualBoundingBoxAscent),
      width: Math.round(m.width),
      height: Math.round(m.actualBoundingBoxAscent + m.actualBoundingBoxDescent),
    });
  });
  const rgba = canvas.data();
  const grey = Buffer.alloc(width * height);
  for (let i = 0; i < grey.length; i++) grey[i] = rgba[i * 4] ?? 255;
  return { grey, width, height, lineBoxes };
}

/**
 * Makes an image of known text, optionally turned, noised, compressed or stored with an EXIF
 * orientation, as a scan or a phone photo would be.
 */
export async function makeTextImage(spec: TextImageSpec): Promise<TextImage> {
  const { grey, width, height, lineBoxes } = drawText(spec);
  if (spec.noise) {
    const random = seeded(42);
    for (let i = 0; i < grey.length; i++) {
      const v = (grey[i] ?? 0) + Math.round((random() * 2 - 1) * spec.noise);
      grey[i] = Math.max(0, Math.min(255, v));
    }
  }
  let image = sharp(grey, { raw: { width, height, channels: 1 } });
  if (spec.rotateDeg) {
    image = sharp(await image.rotate(spec.rotateDeg, { background: "#ffffff" }).png().toBuffer());
  }
  if (spec.exifOrientation) {
    // Store the pixels turned the other way, and the tag that turns them upright for display.
    const turn = spec.exifOrientation === 6 ? -90 : 90;
    image = sharp(await image.rotate(turn).png().toBuffer()).withMetadata({
      orientation: spec.exifOrientation,
    });
  }
  const format = spec.format ?? "png";
  let data: Buffer;
  switch (format) {
    case "png":
      data = await image.png().toBuffer();
      break;
    case "jpeg":
      data = await image.jpeg({ quality: spec.quality ?? 80 }).toBuffer();
      break;
    case "webp":
      data = await image.webp({ quality: spec.quality ?? 80 }).toBuffer();
      break;
    case "tiff":
      data = await image.tiff({ compression: "lzw" }).toBuffer();
      break;
    case "gif":
      data = await image.gif().toBuffer();
      break;
    case "bmp":
      data = await toBmp(image);
      break;
  }
  return { data, lineBoxes, width, height };
}

/** A 24-bit BMP, written by hand: sharp does not write BMP. Rows run bottom-up, padded to 4 bytes. */
async function toBmp(image: Sharp): Promise<Buffer> {
  const { data, info } = await image
    .removeAlpha()
    .toColourspace("srgb")
    .raw()
    .toBuffer({ resolveWithObject: true });
  const { width, height, channels } = info;
  const stride = Math.ceil((width * 3) / 4) * 4;
  const out = Buffer.alloc(54 + stride * height);
  out.write("BM", 0, "latin1");
  out.writeUInt32LE(out.length, 2);
  out.writeUInt32LE(54, 10); // pixels start after the two headers
  out.writeUInt32LE(40, 14); // BITMAPINFOHEADER
  out.writeInt32LE(width, 18);
  out.writeInt32LE(height, 22);
  out.writeUInt16LE(1, 26); // planes
  out.writeUInt16LE(24, 28); // bits a pixel
  out.writeUInt32LE(stride * height, 34);
  for (let y = 0; y < height; y++) {
    const row = 54 + (height - 1 - y) * stride;
    for (let x = 0; x < width; x++) {
      const p = (y * width + x) * channels;
      out[row + x * 3] = data[p + 2] ?? 0; // blue
      out[row + x * 3 + 1] = data[p + 1] ?? 0; // green
      out[row + x * 3 + 2] = data[p] ?? 0; // red
    }
  }
  return out;
}

/** A multi-page TIFF, one page of text a page. */
export async function makeMultiPageTiff(pages: string[][], fontPx = 23): Promise<Buffer> {
  const images = pages.map((lines) => drawText({ lines, fontPx, height: 600 }));
  const frames = await Promise.all(
    images.map((i) =>
      sharp(i.grey, { raw: { width: i.width, height: i.height, channels: 1 } })
        .png()
        .toBuffer(),
    ),
  );
  return sharp(frames, { join: { animated: true } })
    .tiff({ compression: "lzw" })
    .toBuffer();
}

/**
 * A PNG that declares `width × height` pixels (1 bit each, all white) and decodes to them, in a
 * file of tens of kilobytes: a decompression bomb. Written by hand, since an image library would
 * take seconds to encode it.
 */
export function makeDecompressionBomb(width = 20_000, height = 20_000): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), body.length + 4);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 1; // bit depth
  header[9] = 0; // greyscale
  const row = Buffer.alloc(1 + Math.ceil(width / 8), 0xff);
  row[0] = 0; // no filter
  const pixels = deflateSync(Buffer.concat(Array.from({ length: height }, () => row)), { level: 9 });
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", pixels),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/**
 * A scanned document: each page an image of its text at `dpi`, placed on an A4 page with no text
 * layer, as a scanner's PDF is.
 */
export async function makeScannedPdf(
  pages: string[][],
  options: { dpi?: number; rotateDeg?: number } = {},
): Promise<Buffer> {
  const dpi = options.dpi ?? 150;
  const width = Math.round((210 / 25.4) * dpi);
  const height = Math.round((297 / 25.4) * dpi);
  const fontPx = Math.round((11 / 72) * dpi);
  const scans = await Promise.all(
    pages.map((lines) =>
      makeTextImage({
        lines,
        width,
        height,
        fontPx,
        noise: 30,
        format: "jpeg",
        quality: 75,
        ...(options.rotateDeg ? { rotateDeg: options.rotateDeg } : {}),
      }),
    ),
  );
  const doc = new PDFDocument({ size: "A4", autoFirstPage: false, info: { CreationDate: new Date(0) } });
  const chunks: Buffer[] = [];
  doc.on("data", (c: Buffer) => chunks.push(c));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on("end", () => resolve(Buffer.concat(chunks)));
    doc.on("error", reject);
  });
  for (const scan of scans) {
    doc.addPage({ size: "A4", margin: 0 });
    doc.image(scan.data, 0, 0, { width: doc.page.width, height: doc.page.height });
  }
  doc.end();
  return done;
}
