export {
  ExtractionJob,
  FileRejectedError,
  streamedBlob,
  wholeBlob,
  type BlobRead,
  type Extract,
  type ExtractionJobDeps,
  type ExtractionSummary,
} from "./extraction-job.ts";
