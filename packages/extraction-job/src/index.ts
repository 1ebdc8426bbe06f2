export {
  ExtractionJob,
  streamedBlob,
  wholeBlob,
  type BlobRead,
  type Extract,
  type ExtractionJobDeps,
  type ExtractionObserver,
  type ExtractionSummary,
  type ExtractorModuleDeps,
} from "./extraction-job.ts";
// Where extractors have long found it; it lives with the codes it carries, in @locus/contracts.
export { FileRejectedError } from "@locus/contracts";
