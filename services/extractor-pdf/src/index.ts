export { pdfExtractionJob } from "./pdf-extractor.ts";
export { startExtractorPdfModule, type ExtractorPdfDeps } from "./extractor-pdf-module.ts";
