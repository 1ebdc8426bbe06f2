import { createRequire } from "node:module";
import { FileRejectedError } from "@locus/contracts";
import { dirname, join } from "node:path";
import { getDocument, type PDFDocumentProxy, type PDFPageProxy } from "pdfjs-dist/legacy/build/pdf.mjs";
import { findInflationBomb, MAX_INFLATED_STREAM_BYTES } from "./inflation-guard.ts";
import { buildLines, type TextLine, type TextPiece } from "./lines.ts";

export type PdfErrorCode = "pdf_corrupt" | "pdf_encrypted" | "pdf_too_complex";

/** Why a PDF cannot be read, in words a person can act on; the file fails with it. */
export class PdfReadError extends FileRejectedError {
  declare readonly code: PdfErrorCode;
  constructor(code: PdfErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = "PdfReadError";
  }
}

export interface PdfPageText {
  /** 1-based physical page number. */
  page: number;
  lines: TextLine[];
  /**
   * Draws the page as an image, for reading by OCR. Valid until the next page is asked for (the
   * page is released then).
   */
  render: (options: RenderOptions) => Promise<RenderedPage>;
}

export interface RenderOptions {
  /** Resolution to draw at. */
  dpi: number;
  /** Most pixels to draw; a page too large for `dpi` is drawn at a lower one. */
  maxPixels: number;
}

/** A page drawn on white, as grey pixels: one byte a pixel, rows top to bottom. */
export interface RenderedPage {
  grey: Uint8Array;
  width: number;
  height: number;
  /** PDF points (1/72 inch) per drawn pixel: how locators in points relate to the drawing. */
  pointsPerPixel: number;
}

export interface OpenedPdf {
  pageCount: number;
  /**
   * Pages one at a time from page `from` (default 1), each released before the next is read:
   * memory stays flat with page count.
   */
  pages(from?: number): AsyncGenerator<PdfPageText>;
  close(): Promise<void>;
}

const TAIL_BYTES = 2048;

/** Metrics of the 14 standard PDF fonts, shipped in the pdfjs-dist package: read from disk, never fetched. */
const PDFJS_DIR = dirname(createRequire(import.meta.url).resolve("pdfjs-dist/package.json"));
const STANDARD_FONTS = `${join(PDFJS_DIR, "standard_fonts")}/`;
/** The image decoders pdf.js builds as WebAssembly (JBIG2 and JPEG 2000, common in scans). */
const WASM = `${join(PDFJS_DIR, "wasm")}/`;
/** Character maps for CJK fonts. */
const CMAPS = `${join(PDFJS_DIR, "cmaps")}/`;

/**
 * Checks the frame of the file before a reader sees it: pdf.js repairs damaged files so eagerly
 * that a PDF cut off in transfer would otherwise index whatever half survived, silently. And
 * refuses a decompression bomb before anything inflates it.
 */
export function assertReadablePdf(data: Uint8Array): void {
  const head = Buffer.from(data.subarray(0, 1024)).toString("latin1");
  if (!head.includes("%PDF-")) {
    throw new PdfReadError("pdf_corrupt", "The file is not a PDF: it has no %PDF- header.");
  }
  const tail = Buffer.from(data.subarray(Math.max(0, data.length - TAIL_BYTES))).toString("latin1");
  if (!tail.includes("%%EOF")) {
    throw new PdfReadError(
      "pdf_corrupt",
      "The PDF is truncated: it has no end-of-file marker. Upload the whole file again.",
    );
  }
  if (findInflationBomb(data) !== null) {
    throw new PdfReadError(
      "pdf_too_complex",
      `A compressed part of this PDF expands to more than ${MAX_INFLATED_STREAM_BYTES / 1024 / 1024} MB (a decompression bomb); Locus does not read it.`,
    );
  }
}

/**
 * Opens a PDF held in memory. Throws PdfReadError for corrupt, truncated or password-protected
 * files, when opening or later while reading pages. Takes ownership of `data`: pdf.js may
 * transfer its buffer, leaving the caller's view empty.
 */
export async function openPdf(input: Uint8Array): Promise<OpenedPdf> {
  // pdf.js refuses Node Buffers by class; a plain view over the same bytes costs nothing.
  const data = Buffer.isBuffer(input)
    ? new Uint8Array(input.buffer, input.byteOffset, input.byteLength)
    : input;
  assertReadablePdf(data);
  let doc: PDFDocumentProxy;
  try {
    doc = await getDocument({
      data,
      // Never run code generated from the file (fonts compiled with eval: CVE-2024-4367).
      isEvalSupported: false,
      disableFontFace: true,
      useSystemFonts: false,
      standardFontDataUrl: STANDARD_FONTS,
      wasmUrl: WASM,
      cMapUrl: CMAPS,
      cMapPacked: true,
      verbosity: 0,
    }).promise;
  } catch (err) {
    const name = (err as { name?: string }).name;
    if (name === "PasswordException") {
      throw new PdfReadError(
        "pdf_encrypted",
        "The PDF is protected by a password; upload a copy without one.",
        {
          cause: err,
        },
      );
    }
    throw new PdfReadError("pdf_corrupt", "The PDF is damaged and cannot be read.", { cause: err });
  }

  return {
    pageCount: doc.numPages,
    async *pages(from = 1) {
      for (let n = Math.max(1, from); n <= doc.numPages; n++) {
        const page = await doc.getPage(n).catch((err: unknown) => {
          throw new PdfReadError("pdf_corrupt", `Page ${n} of the PDF is damaged and cannot be read.`, {
            cause: err,
          });
        });
        try {
          const content = await page.getTextContent().catch((err: unknown) => {
            throw new PdfReadError("pdf_corrupt", `Page ${n} of the PDF is damaged and cannot be read.`, {
              cause: err,
            });
          });
          const pieces: TextPiece[] = [];
          for (const item of content.items) {
            if (!("str" in item)) continue; // marked-content markers carry no text
            const [, , c = 0, d = 0, x = 0, y = 0] = item.transform as number[];
            pieces.push({ text: item.str, x, y, width: item.width, height: item.height || Math.hypot(c, d) });
          }
          // Locators point into the page as a viewer shows it: points from its top-left corner.
          const view = page.getViewport({ scale: 1 });
          const toPage = (x: number, y: number) => view.convertToViewportPoint(x, y) as [number, number];
          yield {
            page: n,
            lines: buildLines(pieces, toPage),
            render: (options) => renderPage(doc, page, n, options),
          };
        } finally {
          page.cleanup();
        }
      }
    },
    close: () => doc.destroy(),
  };
}

/** Draws a page on a white canvas (@napi-rs/canvas, which pdf.js uses under Node) and encodes it. */
async function renderPage(
  doc: PDFDocumentProxy,
  page: PDFPageProxy,
  n: number,
  options: RenderOptions,
): Promise<RenderedPage> {
  const natural = page.getViewport({ scale: 1 });
  // Never more than the pixel budget, whatever size the page claims to be.
  const budget = Math.sqrt(options.maxPixels / Math.max(1, natural.width * natural.height));
  const viewport = page.getViewport({ scale: Math.min(options.dpi / 72, budget) });
  const width = Math.max(1, Math.floor(viewport.width));
  const height = Math.max(1, Math.floor(viewport.height));
  const factory = doc.canvasFactory as {
    create(w: number, h: number): CanvasEntry;
    destroy(entry: CanvasEntry): void;
  };
  const entry = factory.create(width, height);
  try {
    // A PDF page is drawn on transparent pixels; the recogniser wants paper.
    entry.context.fillStyle = "#ffffff";
    entry.context.fillRect(0, 0, width, height);
    // The context is @napi-rs/canvas's; pdf.js's types name the DOM's, which Node has no types for.
    await page.render({ canvas: null, canvasContext: entry.context as never, viewport }).promise;
    // Grey pixels, not an encoded image: the OCR side reads them as they are, and a buffer of
    // their own can be handed to another thread without a copy.
    const rgba = entry.context.getImageData(0, 0, width, height).data;
    const grey = new Uint8Array(width * height);
    for (let p = 0, i = 0; p < grey.length; p++, i += 4) {
      // Rec. 601 luma in integers.
      grey[p] = (77 * (rgba[i] ?? 0) + 150 * (rgba[i + 1] ?? 0) + 29 * (rgba[i + 2] ?? 0)) >> 8;
    }
    return { grey, width, height, pointsPerPixel: natural.width / width };
  } catch (err) {
    throw new PdfReadError("pdf_corrupt", `Page ${n} of the PDF is damaged and cannot be drawn.`, {
      cause: err,
    });
  } finally {
    factory.destroy(entry);
  }
}

/** The parts of @napi-rs/canvas's canvas and context that are used here. */
interface CanvasEntry {
  context: {
    fillStyle: string;
    fillRect(x: number, y: number, width: number, height: number): void;
    getImageData(x: number, y: number, width: number, height: number): { data: Uint8ClampedArray };
  };
}
