export {
  documentExtractionJob,
  TEXT_FORMAT_MAX_BYTES,
  type DocumentReaders,
  type MacroPolicy,
} from "./document-extractor.ts";
export { startExtractorDocumentModule, type ExtractorDocumentDeps } from "./extractor-document-module.ts";
