import type { components } from "./schema.ts";

export type FileRecord = components["schemas"]["FileRecord"];
export type ValidationIssue = components["schemas"]["ValidationError"];

/**
 * Locus refused a request: `status` is the HTTP status and `body` the parsed JSON body (text when
 * it was not JSON). `detail` is Locus's sentence, or for a 422 FastAPI's list of issues, each with
 * its `loc`, `msg` and `type`. `retryAfterMs` is what a Retry-After header asked for, if any (a 429
 * still refused after the client's retries, or a quota that renews later than it waits).
 */
export class LocusApiError extends Error {
  override readonly name = "LocusApiError";
  readonly status: number;
  readonly body: unknown;
  readonly detail: string | ValidationIssue[] | undefined;
  readonly retryAfterMs: number | null;

  constructor(status: number, body: unknown, retryAfterMs: number | null = null) {
    const detail = detailOf(body);
    super(`Locus answered ${status}: ${describe(detail) ?? (typeof body === "string" ? body : "no detail")}`);
    this.status = status;
    this.body = body;
    this.detail = detail;
    this.retryAfterMs = retryAfterMs;
  }
}

function detailOf(body: unknown): string | ValidationIssue[] | undefined {
  if (body === null || typeof body !== "object" || !("detail" in body)) return undefined;
  const { detail } = body;
  if (typeof detail === "string") return detail;
  return Array.isArray(detail) ? (detail as ValidationIssue[]) : undefined;
}

function describe(detail: string | ValidationIssue[] | undefined): string | undefined {
  if (typeof detail === "string" || detail === undefined) return detail;
  return detail.map((issue) => `${issue.loc.join(".")}: ${issue.msg}`).join("; ");
}

/** waitUntilReady: the file ended `failed`; `error` is the file's `{code, message}`. */
export class LocusFileFailedError extends Error {
  override readonly name = "LocusFileFailedError";
  readonly file: FileRecord;
  readonly error: NonNullable<FileRecord["error"]> | null;

  constructor(file: FileRecord) {
    const error = file.error ?? null;
    super(`File ${file.id} failed: ${error ? `${error.code}: ${error.message}` : "no reason given"}`);
    this.file = file;
    this.error = error;
  }
}

/** waitUntilReady: the file was not `ready` (nor `failed`) in time; `file` is the record last read. */
export class LocusTimeoutError extends Error {
  override readonly name = "LocusTimeoutError";
  readonly file: FileRecord;
  readonly timeoutMs: number;

  constructor(file: FileRecord, timeoutMs: number) {
    super(`File ${file.id} was still ${file.status} after ${timeoutMs} ms`);
    this.file = file;
    this.timeoutMs = timeoutMs;
  }
}
