import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { getDocument, type PDFDocumentProxy } from "pdfjs-dist/legacy/build/pdf.mjs";
import { buildLines, type TextLine, type TextPiece } from "./lines.ts";

export type PdfErrorCode = "pdf_corrupt" | "pdf_encrypted";

/** Why a PDF cannot be read, in words a person can act on. */
export class PdfReadError extends Error {
  constructor(
    readonly code: PdfErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "PdfReadError";
  }
}

export interface PdfPageText {
  /** 1-based physical page number. */
  page: number;
  lines: TextLine[];
}

export interface OpenedPdf {
  pageCount: number;
  /** Pages one at a time, each released before the next is read: memory stays flat with page count. */
  pages(): AsyncGenerator<PdfPageText>;
  close(): Promise<void>;
}

const TAIL_BYTES = 2048;

/** Metrics of the 14 standard PDF fonts, shipped in the pdfjs-dist package: read from disk, never fetched. */
const STANDARD_FONTS = `${join(dirname(createRequire(import.meta.url).resolve("pdfjs-dist/package.json")), "standard_fonts")}/`;

/**
 * Checks the frame of the file before pdf.js sees it: pdf.js repairs damaged files so eagerly
 * that a PDF cut off in transfer would otherwise index whatever half survived, silently.
 */
function assertWholePdf(data: Uint8Array): void {
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
  assertWholePdf(data);
  let doc: PDFDocumentProxy;
  try {
    doc = await getDocument({
      data,
      // Never run code generated from the file (fonts compiled with eval: CVE-2024-4367).
      isEvalSupported: false,
      disableFontFace: true,
      useSystemFonts: false,
      standardFontDataUrl: STANDARD_FONTS,
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
    async *pages() {
      for (let n = 1; n <= doc.numPages; n++) {
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
          yield { page: n, lines: buildLines(pieces) };
        } finally {
          page.cleanup();
        }
      }
    },
    close: () => doc.destroy(),
  };
}
