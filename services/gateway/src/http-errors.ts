import type { NextFunction, Request, Response } from "express";
import multer from "multer";
import { isLocusError, LocusError } from "@locus/contracts";
import type { Logger } from "@locus/runtime";
import { RequestValidationError } from "./validation.ts";

/** Multipart problems in words a client can act on. */
function fromMulter(err: multer.MulterError, maxUploadBytes: number): LocusError {
  switch (err.code) {
    case "LIMIT_FILE_SIZE":
      return new LocusError("payload_too_large", `The file is larger than the ${maxUploadBytes}-byte limit.`);
    case "LIMIT_FILE_COUNT":
    case "LIMIT_PART_COUNT":
    case "LIMIT_FIELD_COUNT":
      return new LocusError(
        "bad_request",
        "Too many parts in the multipart body: send one part named `file`.",
      );
    case "LIMIT_FIELD_KEY":
    case "LIMIT_FIELD_VALUE":
    case "LIMIT_UNEXPECTED_FILE":
    case "MISSING_FIELD_NAME":
    default:
      return new LocusError(
        "bad_request",
        "There was an error parsing the body: send one multipart part named `file`.",
      );
  }
}

/**
 * The one place errors become HTTP: validation errors as pydantic does them, LocusErrors with
 * their status and a sentence, anything else as a 500 that names the request id and hides the rest.
 */
export function errorHandler(logger: Logger, maxUploadBytes: number) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (err instanceof RequestValidationError) {
      res.status(422).json({ detail: err.issues });
      return;
    }
    let error: LocusError | null = null;
    if (isLocusError(err)) error = err;
    else if (err instanceof multer.MulterError) error = fromMulter(err, maxUploadBytes);
    else if (err instanceof URIError) {
      error = new LocusError("bad_request", "The URL is not valid: it has a malformed percent-escape.");
    } else if (
      err instanceof Error &&
      /multipart|boundary|unexpected end of form|part header/i.test(err.message)
    ) {
      error = new LocusError(
        "bad_request",
        "There was an error parsing the body: send one multipart part named `file`.",
      );
    }
    if (error) {
      for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
      if (error.status === 413) res.setHeader("Connection", "close");
      res.status(error.status).json({ detail: error.message });
      return;
    }
    const requestId = String(res.getHeader("X-Request-Id") ?? "");
    logger.error({ err, requestId, method: req.method, path: req.path }, "unhandled error");
    res
      .status(500)
      .json({ detail: `Internal server error. Quote request id ${requestId} when reporting it.` });
  };
}

export function notFound(_req: Request, res: Response): void {
  res.status(404).json({ detail: "Not Found" });
}

export function methodNotAllowed(allowed: string) {
  return (_req: Request, res: Response): void => {
    res.setHeader("Allow", allowed);
    res.status(405).json({ detail: "Method Not Allowed" });
  };
}
