export { pdfExtractionJob, scanReader, type ScannedPageOptions } from "./pdf-extractor.ts";
export { ExtractionPool, type PoolOptions, type ScanReader } from "./extraction-pool.ts";
export { startExtractorPdfModule, type ExtractorPdfDeps } from "./extractor-pdf-module.ts";
