export {
  ExtractionJob,
  FileRejectedError,
  type Extract,
  type ExtractionJobDeps,
  type ExtractionSummary,
} from "./extraction-job.ts";
