export { buildLines, type TextLine, type TextPiece } from "./lines.ts";
export { buildPassages, DEFAULT_PASSAGE_OPTIONS, type PassageOptions } from "./passages.ts";
export {
  openPdf,
  PdfReadError,
  type OpenedPdf,
  type PdfErrorCode,
  type PdfPageText,
  type RenderedPage,
  type RenderOptions,
} from "./pdfjs-reader.ts";
export {
  extractPdf,
  SCANNED_PAGE_MAX_CHARS,
  type PdfExtraction,
  type PopplerReading,
  type ScannedPage,
  type ScanOptions,
} from "./extract-pdf.ts";
export { findInflationBomb, MAX_INFLATED_STREAM_BYTES } from "./inflation-guard.ts";
export {
  findPoppler,
  openPdfWithPoppler,
  PopplerError,
  type PopplerLimits,
  type PopplerTools,
} from "./poppler-reader.ts";
