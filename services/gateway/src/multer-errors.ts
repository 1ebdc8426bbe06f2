import multer from "multer";
import { LocusError } from "@locus/contracts";
import type { ErrorMapper } from "@locus/http";

/** Multipart problems (from multer and busboy) in words a client can act on. */
export function multipartErrors(maxUploadBytes: number): ErrorMapper {
  return (err) => {
    if (err instanceof multer.MulterError) {
      switch (err.code) {
        case "LIMIT_FILE_SIZE":
          return new LocusError(
            "payload_too_large",
            `The file is larger than the ${maxUploadBytes}-byte limit.`,
          );
        case "LIMIT_FILE_COUNT":
        case "LIMIT_PART_COUNT":
        case "LIMIT_FIELD_COUNT":
          return new LocusError(
            "bad_request",
            "Too many parts in the multipart body: send one part named `file`.",
          );
        default:
          return new LocusError(
            "bad_request",
            "There was an error parsing the body: send one multipart part named `file`.",
          );
      }
    }
    if (err instanceof Error && /multipart|boundary|unexpected end of form|part header/i.test(err.message)) {
      return new LocusError(
        "bad_request",
        "There was an error parsing the body: send one multipart part named `file`.",
      );
    }
    return null;
  };
}
