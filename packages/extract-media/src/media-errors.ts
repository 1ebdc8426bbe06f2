export type MediaErrorCode =
  "media_corrupt" | "media_truncated" | "media_too_long" | "media_no_audio" | "media_unsupported";

/** Why a recording cannot be read, in words a person can act on; retrying will not help. */
export class MediaReadError extends Error {
  constructor(
    readonly code: MediaErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "MediaReadError";
  }
}
