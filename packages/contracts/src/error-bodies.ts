import { z } from "zod";

/** Every refusal but a validation error: `{"detail": "<sentence>"}`. */
export const ErrorMessageDto = z.object({
  detail: z.string().describe("What went wrong, in a sentence a person can act on."),
});
export type ErrorMessageDto = z.infer<typeof ErrorMessageDto>;

/**
 * One problem with a request, as pydantic v2 describes it (FastAPI adds `loc`), because clients
 * written against the reference service parse these bodies.
 */
export const ValidationIssueDto = z.object({
  type: z.string(),
  loc: z.array(z.union([z.string(), z.number().int()])),
  msg: z.string(),
  input: z.unknown(),
  ctx: z.record(z.string(), z.unknown()).optional(),
});
export type ValidationIssueDto = z.infer<typeof ValidationIssueDto>;

/** A 422: the issues array, as FastAPI answers. */
export const HttpValidationErrorDto = z.object({ detail: z.array(ValidationIssueDto) });
export type HttpValidationErrorDto = z.infer<typeof HttpValidationErrorDto>;
