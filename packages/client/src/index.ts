export {
  createLocusClient,
  serializeQuery,
  type Deleted,
  type ExtraQuery,
  type FileListPage,
  type FileRecord,
  type ListFilesOptions,
  type LocusClient,
  type LocusClientOptions,
  type LocusHelpers,
  type PreviewUrl,
  type QueryValue,
  type SearchOptions,
  type SearchResponse,
  type SearchResult,
  type UploadOptions,
  type WaitOptions,
} from "./client.ts";
export { LocusApiError, LocusFileFailedError, LocusTimeoutError, type ValidationIssue } from "./errors.ts";
export { retryAfterMs, sendWithRetry, type RetryPolicy } from "./retry.ts";
export type { UploadInput } from "./upload.ts";
export type { components, operations, paths } from "./schema.ts";
