/**
 * Error codes with a stable meaning. Domain code throws LocusError with one of these; the HTTP
 * handler maps the code to a status, and workers map it to retry (transient) or fail the file.
 */
export const ErrorCodes = {
  unauthorized: { status: 401, transient: false },
  not_found: { status: 404, transient: false },
  payload_too_large: { status: 413, transient: false },
  unsupported_media_type: { status: 415, transient: false },
  rate_limited: { status: 429, transient: true },
  quota_exceeded: { status: 429, transient: false },
  bad_request: { status: 400, transient: false },
  forbidden: { status: 403, transient: false },
  conflict: { status: 409, transient: false },
  not_implemented: { status: 501, transient: false },
  unavailable: { status: 503, transient: true },
  internal: { status: 500, transient: true },
  // Reasons a file ends `failed`; they reach clients in the file record's `error.code`.
  pdf_corrupt: { status: 422, transient: false },
  pdf_encrypted: { status: 422, transient: false },
  pdf_timeout: { status: 422, transient: false },
  pdf_too_complex: { status: 422, transient: false },
  image_corrupt: { status: 422, transient: false },
  image_too_large: { status: 422, transient: false },
  image_unsupported: { status: 422, transient: false },
  ocr_timeout: { status: 422, transient: false },
  media_corrupt: { status: 422, transient: false },
  media_truncated: { status: 422, transient: false },
  media_too_long: { status: 422, transient: false },
  media_no_audio: { status: 422, transient: false },
  media_unsupported: { status: 422, transient: false },
  speech_engine_unavailable: { status: 422, transient: false },
  file_missing: { status: 422, transient: false },
  extraction_failed: { status: 422, transient: false },
  indexing_failed: { status: 422, transient: false },
} as const;

export type ErrorCode = keyof typeof ErrorCodes;

export class LocusError extends Error {
  readonly code: ErrorCode;
  /** Extra response headers (Retry-After, WWW-Authenticate...). */
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    message: string,
    options?: { headers?: Record<string, string>; cause?: unknown },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "LocusError";
    this.code = code;
    this.headers = options?.headers ?? {};
  }

  get status(): number {
    return ErrorCodes[this.code].status;
  }

  get transient(): boolean {
    return ErrorCodes[this.code].transient;
  }
}

export const isLocusError = (err: unknown): err is LocusError => err instanceof LocusError;
