export { documentExtractionJob, type DocumentReaders, type MacroPolicy } from "./document-extractor.ts";
export { startExtractorDocumentModule, type ExtractorDocumentDeps } from "./extractor-document-module.ts";
