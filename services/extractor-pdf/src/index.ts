export { pdfExtractionJob, type ScannedPageOptions } from "./pdf-extractor.ts";
export { startExtractorPdfModule, type ExtractorPdfDeps } from "./extractor-pdf-module.ts";
