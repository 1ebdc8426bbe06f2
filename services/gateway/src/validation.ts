/**
 * Request validation that answers exactly as FastAPI/pydantic v2 does, because clients written
 * against the reference service parse these bodies: {"detail": [{type, loc, msg, input, ctx?}]}.
 */
import { PASSAGE_PAGE_LIMITS, SEARCH_LIMITS, SearchMode } from "@locus/contracts";
import { RequestValidationError, type ValidationIssue } from "@locus/http";

export { RequestValidationError, type ValidationIssue };

type Loc = ["query" | "path" | "body", string];

/** Express query values can repeat (?q=a&q=b); like FastAPI, the last one wins. */
export function lastValue(value: unknown): string | undefined {
  if (Array.isArray(value)) return lastValue(value.at(-1));
  return typeof value === "string" ? value : undefined;
}

export const missing = (loc: Loc): ValidationIssue => ({
  type: "missing",
  loc,
  msg: "Field required",
  input: null,
});

/** A plain form field named `file` where the upload's file part belongs: said as FastAPI says it. */
export const notAnUpload = (input: string): ValidationIssue => ({
  type: "value_error",
  loc: ["body", "file"],
  msg: "Value error, Expected UploadFile, received: <class 'str'>",
  input,
  ctx: { error: {} },
});

function checkString(loc: Loc, value: string, min: number, max: number): ValidationIssue | null {
  const length = [...value].length;
  if (length < min) {
    return {
      type: "string_too_short",
      loc,
      msg: `String should have at least ${min} character${min === 1 ? "" : "s"}`,
      input: value,
      ctx: { min_length: min },
    };
  }
  if (length > max) {
    return {
      type: "string_too_long",
      loc,
      msg: `String should have at most ${max} character${max === 1 ? "" : "s"}`,
      input: value,
      ctx: { max_length: max },
    };
  }
  return null;
}

/** pydantic's lax str -> int: surrounding space, a sign, digit groups with underscores, a zero fraction. */
function parseInteger(value: string): number | null {
  const m = /^\s*([+-]?\d+(?:_\d+)*)(?:\.0+)?\s*$/.exec(value);
  return m?.[1] === undefined ? null : Number(m[1].replace(/_/g, ""));
}

function checkInteger(
  loc: Loc,
  value: string,
  ge: number,
  le: number,
): { value: number; issue: null } | { value: null; issue: ValidationIssue } {
  const n = parseInteger(value);
  if (n === null) {
    return {
      value: null,
      issue: {
        type: "int_parsing",
        loc,
        msg: "Input should be a valid integer, unable to parse string as an integer",
        input: value,
      },
    };
  }
  if (n < ge) {
    return {
      value: null,
      issue: {
        type: "greater_than_equal",
        loc,
        msg: `Input should be greater than or equal to ${ge}`,
        input: value,
        ctx: { ge },
      },
    };
  }
  if (n > le) {
    return {
      value: null,
      issue: {
        type: "less_than_equal",
        loc,
        msg: `Input should be less than or equal to ${le}`,
        input: value,
        ctx: { le },
      },
    };
  }
  return { value: n, issue: null };
}

export interface SearchParams {
  q: string;
  limit: number;
  mode: SearchMode;
  /** Results skipped: the previous page's `next_offset` (0, the first page, by default). */
  offset: number;
}

/** An optional integer query parameter: its value, or `fallback` when absent; a bad one adds an issue. */
function integerParam(
  query: Record<string, unknown>,
  name: string,
  min: number,
  max: number,
  fallback: number,
  issues: ValidationIssue[],
): number {
  const raw = lastValue(query[name]);
  if (raw === undefined) return fallback;
  const checked = checkInteger(["query", name], raw, min, max);
  if (checked.issue) issues.push(checked.issue);
  return checked.issue ? fallback : checked.value;
}

/**
 * GET /api/search: q (1..1000 characters), limit (1..100, default 50), mode (quick|ai, default
 * quick), offset (0..1000, default 0). The filters are parseFileFilter's.
 */
export function parseSearchParams(query: Record<string, unknown>): SearchParams {
  const issues: ValidationIssue[] = [];
  const q = lastValue(query.q);
  if (q === undefined) issues.push(missing(["query", "q"]));
  else {
    const issue = checkString(["query", "q"], q, SEARCH_LIMITS.qMinLength, SEARCH_LIMITS.qMaxLength);
    if (issue) issues.push(issue);
  }

  const limit = integerParam(
    query,
    "limit",
    SEARCH_LIMITS.limitMin,
    SEARCH_LIMITS.limitMax,
    SEARCH_LIMITS.limitDefault,
    issues,
  );

  let mode: SearchMode = "quick";
  const rawMode = lastValue(query.mode);
  if (rawMode !== undefined) {
    const parsed = SearchMode.safeParse(rawMode);
    if (parsed.success) mode = parsed.data;
    else {
      const expected = SearchMode.options.map((o) => `'${o}'`).join(" or ");
      issues.push({
        type: "literal_error",
        loc: ["query", "mode"],
        msg: `Input should be ${expected}`,
        input: rawMode,
        ctx: { expected },
      });
    }
  }

  const offset = integerParam(query, "offset", 0, SEARCH_LIMITS.offsetMax, 0, issues);

  if (issues.length > 0) throw new RequestValidationError(issues);
  return { q: q ?? "", limit, mode, offset };
}

export const LIST_LIMITS = { min: 1, max: 1000, default: 1000 } as const;

/** GET /api/files: limit (1..1000, default 1000) and the cursor from the previous page's Link header. */
export function parseListParams(query: Record<string, unknown>): {
  limit: number;
  cursor: string | undefined;
} {
  const issues: ValidationIssue[] = [];
  const limit = integerParam(query, "limit", LIST_LIMITS.min, LIST_LIMITS.max, LIST_LIMITS.default, issues);
  const cursor = lastValue(query.cursor);
  if (cursor !== undefined) {
    const issue = checkString(["query", "cursor"], cursor, 1, 512);
    if (issue) issues.push(issue);
  }
  if (issues.length > 0) throw new RequestValidationError(issues);
  return { limit, cursor };
}

/** GET /api/files/{id}/passages: offset (from 0, default 0) and limit (1..500, default 100). */
export function parsePassagePageParams(query: Record<string, unknown>): { offset: number; limit: number } {
  const issues: ValidationIssue[] = [];
  const { limitMin, limitMax, limitDefault } = PASSAGE_PAGE_LIMITS;
  const limit = integerParam(query, "limit", limitMin, limitMax, limitDefault, issues);
  const offset = integerParam(query, "offset", 0, Number.MAX_SAFE_INTEGER, 0, issues);
  if (issues.length > 0) throw new RequestValidationError(issues);
  return { offset, limit };
}

const GROUP_STARTS = [0, 9, 14, 19, 24] as const;
const GROUP_LENGTHS = [8, 4, 4, 4, 12] as const;

/**
 * Why a string is not a UUID, in the words of the Rust `uuid` crate that pydantic-core uses, so
 * the message matches pydantic's character for character (checked against pydantic 2.13 by
 * test/pydantic-compat.test.ts).
 */
export function uuidError(input: string): string {
  let body = input;
  let offset = 0;
  let simple = true;
  if (input.length >= 2 && input.startsWith("{") && input.endsWith("}")) {
    body = input.slice(1, -1);
    offset = 1;
    simple = false;
  } else if (input.startsWith("urn:uuid:")) {
    body = input.slice("urn:uuid:".length);
    offset = "urn:uuid:".length;
    simple = false;
  }
  let hyphens = 0;
  const bounds: number[] = [];
  let byteIndex = 0;
  for (const ch of body) {
    const code = ch.codePointAt(0) ?? 0;
    if (code > 0x7f || !/[0-9a-fA-F-]/.test(ch)) {
      return `invalid character: found \`${ch}\` at ${byteIndex + offset + 1}`;
    }
    if (ch === "-") {
      if (hyphens < 4) bounds.push(byteIndex);
      hyphens += 1;
    }
    byteIndex += Buffer.byteLength(ch);
  }
  const inputBytes = Buffer.byteLength(input);
  if (hyphens === 0 && simple)
    return `invalid length: expected length 32 for simple format, found ${inputBytes}`;
  if (hyphens !== 4) return `invalid group count: expected 5, found ${hyphens + 1}`;
  for (let i = 0; i < 4; i++) {
    const start = GROUP_STARTS[i] ?? 0;
    const nextStart = GROUP_STARTS[i + 1] ?? 0;
    const bound = bounds[i] ?? 0;
    if (bound !== nextStart - 1) {
      return `invalid group length in group ${i}: expected ${GROUP_LENGTHS[i]}, found ${bound - start}`;
    }
  }
  return `invalid group length in group 4: expected 12, found ${inputBytes - GROUP_STARTS[4]}`;
}

const UUID_FORMS = [
  /^([0-9a-f]{8})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{12})$/i,
  /^\{([0-9a-f]{8})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{12})\}$/i,
  /^urn:uuid:([0-9a-f]{8})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{12})$/i,
];

/** Parses a UUID in any form pydantic accepts; returns it lowercase and hyphenated. */
export function parseUuid(input: string): string | null {
  for (const form of UUID_FORMS) {
    const m = form.exec(input);
    // The first form also matches 32 hex digits with hyphens in odd places; require exact shapes.
    if (m && (input.length === 32 || input.length === 36 || input.length === 38 || input.length === 45)) {
      return m.slice(1, 6).join("-").toLowerCase();
    }
  }
  return null;
}

/** Validates the file_id path parameter. */
export function parseFileId(value: string): string {
  const id = parseUuid(value);
  if (id !== null) return id;
  const error = uuidError(value);
  throw new RequestValidationError([
    {
      type: "uuid_parsing",
      loc: ["path", "file_id"],
      msg: `Input should be a valid UUID, ${error}`,
      input: value,
      ctx: { error },
    },
  ]);
}
