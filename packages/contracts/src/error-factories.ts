import { LocusError } from "./errors.ts";

type Headers = Record<string, string>;

/**
 * The errors Locus answers with, each written once: `throw Errors.fileNotFound()`. A refusal that
 * more than one place makes (the gateway and the files service both check an upload, say) comes
 * from here, so its status, code and sentence cannot drift apart. Sentences are what clients see
 * in `detail`; changing one changes the API.
 */
export const Errors = {
  // Files.
  fileNotFound: () => new LocusError("not_found", "File not found"),
  fileNotReady: (status: string) =>
    new LocusError("conflict", `The file is ${status}; its passages can be read once it is ready.`),
  fileEmpty: () => new LocusError("bad_request", "The uploaded file is empty."),
  fileUnnamed: () =>
    new LocusError("bad_request", "The uploaded file has no name; send a filename in the multipart part."),
  fileNameTooLong: (maxLength: number) =>
    new LocusError("bad_request", `The file name is longer than ${maxLength} characters.`),
  payloadTooLarge: (maxBytes: number) =>
    new LocusError("payload_too_large", `The file is larger than the ${maxBytes}-byte limit.`),
  /** `what`: "image/svg+xml files are", or "This kind of file is"; `accepted`: the kinds, in words. */
  unsupportedMediaType: (what: string, accepted: string) =>
    new LocusError(
      "unsupported_media_type",
      `${what} not supported. Locus accepts: ${accepted} (recognised from the file's content, not its name).`,
    ),
  quotaExceeded: (plan: string, quota: number, renewsAt: Date, now: Date) =>
    new LocusError(
      "quota_exceeded",
      `The ${plan} plan's monthly quota of ${quota} uploads is used up; it renews on ${renewsAt.toISOString()}.`,
      { headers: { "Retry-After": String(Math.ceil((renewsAt.getTime() - now.getTime()) / 1000)) } },
    ),
  multipartTooManyParts: () =>
    new LocusError("bad_request", "Too many parts in the multipart body: send one part named `file`."),
  multipartMalformed: () =>
    new LocusError(
      "bad_request",
      "There was an error parsing the body: send one multipart part named `file`.",
    ),
  previewLinkInvalid: () =>
    new LocusError("forbidden", "This preview link is invalid or has expired; ask the API for a new one."),
  rangeNotSatisfiable: (sizeBytes: number) =>
    new LocusError("range_not_satisfiable", `The requested range is outside the file's ${sizeBytes} bytes.`, {
      headers: { "Content-Range": `bytes */${sizeBytes}` },
    }),

  // Webhooks.
  webhookNotFound: () => new LocusError("not_found", "Webhook endpoint not found"),
  webhookDeliveryNotFound: () => new LocusError("not_found", "Webhook delivery not found"),
  eventNotFound: () => new LocusError("not_found", "Event not found"),
  tooManyWebhooks: (limit: number) =>
    new LocusError(
      "conflict",
      `An account has at most ${limit} webhook endpoints: delete one to add another.`,
    ),
  webhooksUnavailable: () =>
    new LocusError(
      "unavailable",
      "Webhooks are not available from this gateway: the operator has not set LOCUS_WEBHOOKS_URL.",
    ),
  jsonBodyTooLarge: (limit: string) =>
    new LocusError("payload_too_large", `The JSON body is larger than the ${limit} limit.`),

  // API keys and limits. `challenge`: the WWW-Authenticate header the refusal carries.
  missingApiKey: (challenge: Headers) =>
    new LocusError("unauthorized", "Missing API key: send the header Authorization: Bearer <API key>.", {
      headers: challenge,
    }),
  malformedAuthorization: (challenge: Headers) =>
    new LocusError(
      "unauthorized",
      "Malformed Authorization header: expected Bearer followed by a key starting with sk_live_ or sk_test_.",
      { headers: challenge },
    ),
  invalidApiKey: (challenge: Headers) =>
    new LocusError("unauthorized", "Invalid API key: it does not exist or has been revoked.", {
      headers: challenge,
    }),
  rateLimited: (plan: string, limit: number, retryAfter: number) =>
    new LocusError(
      "rate_limited",
      `Rate limit exceeded: the ${plan} plan allows ${limit} requests per second. Retry after ${retryAfter} second${retryAfter === 1 ? "" : "s"}.`,
      { headers: { "Retry-After": String(retryAfter) } },
    ),

  // Between Locus's own services.
  serviceTokenMissing: () =>
    new LocusError("unauthorized", "This is an internal endpoint: a service token is required."),
  serviceTokenInvalid: () => new LocusError("unauthorized", "The service token is invalid or has expired."),
  serviceTokenForAnotherRequest: () =>
    new LocusError("unauthorized", "The service token was issued for another request."),
  serviceTokenUsed: () => new LocusError("unauthorized", "The service token was already used."),
  serviceUnavailable: (audience: string, cause: unknown) =>
    new LocusError("unavailable", `The ${audience} service is unavailable; try again shortly.`, {
      cause,
      headers: { "Retry-After": "1" },
    }),
  serviceBrokeOff: (audience: string, cause: unknown) =>
    new LocusError("unavailable", `The ${audience} service broke off its answer; try again shortly.`, {
      cause,
      headers: { "Retry-After": "1" },
    }),
  dependencyUnavailable: () =>
    new LocusError("unavailable", "A service Locus depends on is unavailable; try again shortly.", {
      headers: { "Retry-After": "5" },
    }),

  // The dashboard's accounts.
  accountExists: () =>
    new LocusError("conflict", "An account with this email already exists: sign in instead."),
  fieldRequired: (name: string) => new LocusError("bad_request", `The field "${name}" is required.`),

  // Requests.
  malformedUrl: () =>
    new LocusError("bad_request", "The URL is not valid: it has a malformed percent-escape."),
} as const;
