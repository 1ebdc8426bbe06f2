import { FileRejectedError } from "@locus/contracts";

export type MediaErrorCode =
  | "media_corrupt"
  | "media_truncated"
  | "media_too_long"
  | "media_no_audio"
  | "media_unsupported"
  | "media_timeout"
  | "speech_incomplete";

/** Why a recording cannot be read, in words a person can act on; retrying will not help. */
export class MediaReadError extends FileRejectedError {
  declare readonly code: MediaErrorCode;
  constructor(code: MediaErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = "MediaReadError";
  }
}
