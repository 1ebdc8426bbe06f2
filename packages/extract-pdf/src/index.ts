export { buildLines, type TextLine, type TextPiece } from "./lines.ts";
export { buildPassages, DEFAULT_PASSAGE_OPTIONS, type PassageOptions } from "./passages.ts";
export { openPdf, PdfReadError, type OpenedPdf, type PdfErrorCode, type PdfPageText } from "./pdf-reader.ts";
export { extractPdf, type PdfExtraction } from "./extract-pdf.ts";
