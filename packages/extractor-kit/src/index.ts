export { ExtractionJob, FileRejectedError, type Extract, type ExtractionJobDeps } from "./extraction-job.ts";
