/**
 * The webhooks API's request bodies and parameters, refused as FastAPI/pydantic v2 would refuse
 * them (a body model with `url: str`, `events: list[Literal[...]]`, `description: str`), so a
 * client handles these 422s like every other.
 */
import {
  FILE_EVENT_TYPES,
  WEBHOOK_LIMITS,
  type FileEventType,
  type WebhookEndpointChangeInput,
  type WebhookEndpointInput,
} from "@locus/contracts";
import { RequestValidationError, type ValidationIssue } from "@locus/http";
import { lastValue, parseUuid, uuidError } from "./validation.ts";

type BodyLoc = ["body", ...(string | number)[]];

const EXPECTED_EVENTS = FILE_EVENT_TYPES.map((t) => `'${t}'`)
  .join(", ")
  .replace(/, ([^,]*)$/, " or $1");

function stringField(
  body: Record<string, unknown>,
  name: string,
  maxLength: number,
  issues: ValidationIssue[],
): string | undefined {
  const value = body[name];
  if (value === undefined) return undefined;
  const loc: BodyLoc = ["body", name];
  if (typeof value !== "string") {
    issues.push({ type: "string_type", loc, msg: "Input should be a valid string", input: value });
    return undefined;
  }
  if ([...value].length > maxLength) {
    issues.push({
      type: "string_too_long",
      loc,
      msg: `String should have at most ${maxLength} characters`,
      input: value,
      ctx: { max_length: maxLength },
    });
    return undefined;
  }
  return value;
}

function eventsField(body: Record<string, unknown>, issues: ValidationIssue[]): FileEventType[] | undefined {
  const value = body.events;
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) {
    issues.push({
      type: "list_type",
      loc: ["body", "events"],
      msg: "Input should be a valid list",
      input: value,
    });
    return undefined;
  }
  if (value.length === 0) {
    issues.push({
      type: "too_short",
      loc: ["body", "events"],
      msg: "List should have at least 1 item after validation, not 0",
      input: value,
      ctx: { field_type: "List", min_length: 1, actual_length: 0 },
    });
    return undefined;
  }
  const events: FileEventType[] = [];
  value.forEach((item: unknown, i) => {
    if (typeof item === "string" && (FILE_EVENT_TYPES as readonly string[]).includes(item)) {
      if (!events.includes(item as FileEventType)) events.push(item as FileEventType);
    } else {
      issues.push({
        type: "literal_error",
        loc: ["body", "events", i],
        msg: `Input should be ${EXPECTED_EVENTS}`,
        input: item,
        ctx: { expected: EXPECTED_EVENTS },
      });
    }
  });
  return events;
}

/** The body as an object, or the issue pydantic reports for a body that is not one. */
function bodyObject(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) {
    throw new RequestValidationError([
      { type: "missing", loc: ["body"], msg: "Field required", input: null },
    ]);
  }
  if (typeof body !== "object" || Array.isArray(body)) {
    throw new RequestValidationError([
      {
        type: "model_attributes_type",
        loc: ["body"],
        msg: "Input should be a valid dictionary or object to extract fields from",
        input: body,
      },
    ]);
  }
  return body as Record<string, unknown>;
}

/** POST /api/webhooks: `url` required; `events` (default: all three) and `description` optional. */
export function parseWebhookCreate(raw: unknown): WebhookEndpointInput {
  const body = bodyObject(raw);
  const issues: ValidationIssue[] = [];
  if (body.url === undefined)
    issues.push({ type: "missing", loc: ["body", "url"], msg: "Field required", input: body });
  const url = stringField(body, "url", WEBHOOK_LIMITS.urlMaxLength, issues);
  const events = eventsField(body, issues);
  const description = stringField(body, "description", WEBHOOK_LIMITS.descriptionMaxLength, issues);
  if (issues.length > 0) throw new RequestValidationError(issues);
  return { url: url ?? "", events: events ?? [...FILE_EVENT_TYPES], description: description ?? "" };
}

/** PATCH /api/webhooks/{id}: any of url, events, description, enabled. */
export function parseWebhookChange(raw: unknown): WebhookEndpointChangeInput {
  const body = bodyObject(raw);
  const issues: ValidationIssue[] = [];
  const url = stringField(body, "url", WEBHOOK_LIMITS.urlMaxLength, issues);
  const events = eventsField(body, issues);
  const description = stringField(body, "description", WEBHOOK_LIMITS.descriptionMaxLength, issues);
  let enabled: boolean | undefined;
  if (body.enabled !== undefined) {
    if (typeof body.enabled === "boolean") enabled = body.enabled;
    else
      issues.push({
        type: "bool_type",
        loc: ["body", "enabled"],
        msg: "Input should be a valid boolean",
        input: body.enabled,
      });
  }
  if (issues.length > 0) throw new RequestValidationError(issues);
  return {
    ...(url === undefined ? {} : { url }),
    ...(events === undefined ? {} : { events }),
    ...(description === undefined ? {} : { description }),
    ...(enabled === undefined ? {} : { enabled }),
  };
}

/** A URL the webhooks service refuses: said as a pydantic validator's ValueError on `url`. */
export function refusedUrl(url: string, problem: string): RequestValidationError {
  return new RequestValidationError([
    {
      type: "value_error",
      loc: ["body", "url"],
      msg: `Value error, ${problem}`,
      input: url,
      ctx: { error: {} },
    },
  ]);
}

/** An id in the path: a UUID in any form pydantic accepts, or a 422 naming the parameter. */
export function parseIdParam(name: string, value: string): string {
  const id = parseUuid(value);
  if (id !== null) return id;
  const error = uuidError(value);
  throw new RequestValidationError([
    {
      type: "uuid_parsing",
      loc: ["path", name],
      msg: `Input should be a valid UUID, ${error}`,
      input: value,
      ctx: { error },
    },
  ]);
}

/** GET .../deliveries: limit (1..100, default 20) and the `before` cursor of the previous page. */
export function parseDeliveriesQuery(query: Record<string, unknown>): { limit: number; before?: string } {
  const issues: ValidationIssue[] = [];
  const { deliveriesLimitMin: min, deliveriesLimitMax: max, deliveriesLimitDefault } = WEBHOOK_LIMITS;
  let limit: number = deliveriesLimitDefault;
  const rawLimit = lastValue(query.limit);
  if (rawLimit !== undefined) {
    const n = /^\s*[+-]?\d+\s*$/.test(rawLimit) ? Number(rawLimit) : Number.NaN;
    if (Number.isNaN(n))
      issues.push({
        type: "int_parsing",
        loc: ["query", "limit"],
        msg: "Input should be a valid integer, unable to parse string as an integer",
        input: rawLimit,
      });
    else if (n < min)
      issues.push({
        type: "greater_than_equal",
        loc: ["query", "limit"],
        msg: `Input should be greater than or equal to ${min}`,
        input: rawLimit,
        ctx: { ge: min },
      });
    else if (n > max)
      issues.push({
        type: "less_than_equal",
        loc: ["query", "limit"],
        msg: `Input should be less than or equal to ${max}`,
        input: rawLimit,
        ctx: { le: max },
      });
    else limit = n;
  }
  const before = lastValue(query.before);
  if (issues.length > 0) throw new RequestValidationError(issues);
  return before === undefined || before === "" ? { limit } : { limit, before };
}
