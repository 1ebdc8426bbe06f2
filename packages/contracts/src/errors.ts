/**
 * HTTP error codes with a stable meaning. Domain code throws LocusError with one of these; the HTTP
 * handler answers with its status (and names the code in X-Locus-Error-Code), and a service
 * client turns a transient one from another service into a retry.
 */
export const ErrorCodes = {
  unauthorized: { status: 401, transient: false },
  not_found: { status: 404, transient: false },
  payload_too_large: { status: 413, transient: false },
  unsupported_media_type: { status: 415, transient: false },
  range_not_satisfiable: { status: 416, transient: false },
  rate_limited: { status: 429, transient: true },
  quota_exceeded: { status: 429, transient: false },
  bad_request: { status: 400, transient: false },
  forbidden: { status: 403, transient: false },
  conflict: { status: 409, transient: false },
  not_implemented: { status: 501, transient: false },
  unavailable: { status: 503, transient: true },
  internal: { status: 500, transient: true },
} as const;

export type ErrorCode = keyof typeof ErrorCodes;

/**
 * Reasons a file ends `failed`: what a failed file record's `error.code` may be. /openapi.json
 * lists them, in this order, in the description of FileRecord's `error`.
 */
export const FileFailureCodes = [
  "pdf_corrupt",
  "pdf_encrypted",
  "pdf_timeout",
  "pdf_too_complex",
  "image_corrupt",
  "image_too_large",
  "image_unsupported",
  "ocr_timeout",
  "media_corrupt",
  "media_truncated",
  "media_too_long",
  "media_no_audio",
  "media_unsupported",
  "media_timeout",
  "speech_engine_unavailable",
  "speech_incomplete",
  "document_corrupt",
  "document_encrypted",
  "document_too_large",
  "document_macros",
  "converter_unavailable",
  "conversion_failed",
  "conversion_timeout",
  "text_too_large",
  "file_missing",
  "extraction_failed",
  "indexing_failed",
  "processing_abandoned",
] as const;

export type FileFailureCode = (typeof FileFailureCodes)[number];

/**
 * Why a file cannot be processed: a property of the file (damaged, too large, built to stall) or
 * of the engine it needs, so the file fails at once with this code and message instead of being
 * retried. Extractors throw it (or their own errors built on it) as they are.
 */
export class FileRejectedError extends Error {
  constructor(
    readonly code: FileFailureCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "FileRejectedError";
  }
}

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
