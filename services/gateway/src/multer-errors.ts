import multer from "multer";
import { Errors } from "@locus/contracts";
import type { ErrorMapper } from "@locus/http";

/** Multipart problems (from multer and busboy) in words a client can act on. */
export function multipartErrors(maxUploadBytes: number): ErrorMapper {
  return (err) => {
    if (err instanceof multer.MulterError) {
      switch (err.code) {
        case "LIMIT_FILE_SIZE":
          return Errors.payloadTooLarge(maxUploadBytes);
        case "LIMIT_FILE_COUNT":
        case "LIMIT_PART_COUNT":
        case "LIMIT_FIELD_COUNT":
          return Errors.multipartTooManyParts();
        default:
          return Errors.multipartMalformed();
      }
    }
    if (err instanceof Error && /multipart|boundary|unexpected end of form|part header/i.test(err.message)) {
      return Errors.multipartMalformed();
    }
    return null;
  };
}
