import type { NextFunction, Request, Response } from "express";
import {
  Errors,
  isLocusError,
  type LocusError,
  type ErrorMessageDto,
  type HttpValidationErrorDto,
  type ValidationIssueDto,
} from "@locus/contracts";
import type { Logger } from "@locus/runtime";

/** One problem with a request, as pydantic v2 describes it (its schema is /openapi.json's). */
export type ValidationIssue = ValidationIssueDto;

/** A 422 whose body pydantic would write: the issues array, as FastAPI answers. */
export class RequestValidationError extends Error {
  constructor(readonly issues: ValidationIssue[]) {
    super("Request validation failed");
    this.name = "RequestValidationError";
  }
}

/** Turns errors a service does not know into LocusErrors it can answer with; null to pass. */
export type ErrorMapper = (err: unknown) => LocusError | null;

/**
 * The one place errors become HTTP, in every Locus process: validation errors as pydantic does
 * them, LocusErrors with their status, headers and a sentence (plus their code, for the services
 * that call each other), anything else as a 500 that names the request id and hides the rest.
 */
export function errorHandler(logger: Logger, mappers: ErrorMapper[] = []) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (err instanceof RequestValidationError) {
      res.status(422).json({ detail: err.issues } satisfies HttpValidationErrorDto);
      return;
    }
    let error: LocusError | null = isLocusError(err) ? err : null;
    for (const map of [...mappers, dependencyUnavailable]) error ??= map(err);
    if (!error && err instanceof URIError) {
      error = Errors.malformedUrl();
    }
    if (error) {
      if (error.code === "unavailable")
        logger.warn({ err, method: req.method, path: req.path }, "dependency unavailable");
      // A fault of Locus's own (a service of another version answering another shape, say): the
      // client is told, and so must the operator be.
      else if (error.status >= 500)
        logger.error({ err, method: req.method, path: req.path }, "internal error answered");
      for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
      if (error.status === 413) res.setHeader("Connection", "close");
      res.setHeader("X-Locus-Error-Code", error.code);
      res.status(error.status).json({ detail: error.message } satisfies ErrorMessageDto);
      return;
    }
    const requestId = String(res.getHeader("X-Request-Id") ?? "");
    logger.error({ err, requestId, method: req.method, path: req.path }, "unhandled error");
    res
      .status(500)
      .json({ detail: `Internal server error. Quote request id ${requestId} when reporting it.` });
  };
}

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
]);

/**
 * A database or broker this process needs is down or unreachable: a 503 the client can retry,
 * not a 500. Recognises network errors and PostgreSQL's connection SQLSTATEs (class 08, 57P01-03,
 * 53300), also inside an AggregateError, and the pg client's own connection messages.
 */
export function isDependencyUnavailable(err: unknown, depth = 0): boolean {
  if (!(err instanceof Error) || depth > 3) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string") {
    if (
      NETWORK_CODES.has(code) ||
      code.startsWith("08") ||
      ["57P01", "57P02", "57P03", "53300"].includes(code)
    ) {
      return true;
    }
  }
  if (/Connection terminated|timeout exceeded when trying to connect|Query read timeout/i.test(err.message))
    return true;
  if (err instanceof AggregateError) return err.errors.some((e) => isDependencyUnavailable(e, depth + 1));
  return isDependencyUnavailable(err.cause, depth + 1);
}

const dependencyUnavailable: ErrorMapper = (err) =>
  isDependencyUnavailable(err) ? Errors.dependencyUnavailable() : null;

export function notFound(_req: Request, res: Response): void {
  res.status(404).json({ detail: "Not Found" });
}

export function methodNotAllowed(allowed: string) {
  return (_req: Request, res: Response): void => {
    res.setHeader("Allow", allowed);
    res.status(405).json({ detail: "Method Not Allowed" });
  };
}
