/**
 * The rules a request's parameters and body fields follow, each stated once: what /openapi.json
 * says of it, and how it is checked. Refusals are FastAPI/pydantic v2's, word for word, because
 * clients written against the reference service parse these bodies: {"detail": [{type, loc, msg,
 * input, ctx?}]} (checked against real pydantic by test/pydantic-compat.test.ts).
 */
import { keysetFromCursor, PAGE_CURSOR_MAX_LENGTH, positionFromCursor } from "@locus/contracts";
import { RequestValidationError, type ValidationIssue } from "@locus/http";

export { RequestValidationError, type ValidationIssue };
export type Loc = ValidationIssue["loc"];
type Issues = ValidationIssue[];

/** One parameter's (or body field's) rule. */
export interface Rule<T> {
  /**
   * A parameter's OpenAPI object without its name and place (a body field's: its schema); null
   * for what OpenAPI cannot list (`metadata.<key>`: the operation's description says it).
   */
  doc: Record<string, unknown> | null;
  /** The value; a bad one adds pydantic's issues at `loc`. `source` is the whole query or body. */
  parse(
    raw: unknown,
    loc: Loc,
    issues: Issues,
    context: { source: Record<string, unknown>; sandbox: boolean },
  ): T;
}

interface Doc {
  description?: string | undefined;
  required?: boolean;
}
const param = (o: Doc, schema: object, extra: object = {}) => ({
  required: o.required ?? false,
  ...(o.description === undefined ? {} : { description: o.description }),
  schema,
  ...extra,
});

/** Express query values can repeat (?q=a&q=b); like FastAPI, the last one wins. */
export function lastValue(value: unknown): string | undefined {
  if (Array.isArray(value)) return lastValue(value.at(-1));
  return typeof value === "string" ? value : undefined;
}

/** Every value of a query parameter that may repeat (`?file_id=a&file_id=b`), in order. */
export function allValues(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === "string");
  return typeof value === "string" ? [value] : [];
}

export const missing = (loc: Loc, input: unknown = null): ValidationIssue => ({
  type: "missing",
  loc,
  msg: "Field required",
  input,
});

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** pydantic counts characters (code points); `length` may say otherwise where the store counts differently. */
function checkLength(
  loc: Loc,
  value: string,
  issues: Issues,
  min = 0,
  max = Infinity,
  length = [...value].length,
): boolean {
  if (length < min) {
    const msg = `String should have at least ${plural(min, "character")}`;
    issues.push({ type: "string_too_short", loc, msg, input: value, ctx: { min_length: min } });
  } else if (length > max) {
    const msg = `String should have at most ${plural(max, "character")}`;
    issues.push({ type: "string_too_long", loc, msg, input: value, ctx: { max_length: max } });
  } else return true;
  return false;
}

/** A string query parameter, the last one given; `required` reports it missing as pydantic does. */
export function text<R extends boolean = false>(
  o: Doc & { required?: R; min?: number; max?: number },
): Rule<R extends true ? string : string | undefined> {
  return {
    doc: param(o, { type: "string", minLength: o.min, maxLength: o.max }),
    parse(raw, loc, issues) {
      const value = lastValue(raw);
      if (value === undefined) {
        if (o.required) issues.push(missing(loc));
      } else if (checkLength(loc, value, issues, o.min, o.max)) return value;
      return undefined as R extends true ? string : undefined;
    },
  };
}

/** pydantic's lax str -> int: surrounding space, a sign, digit groups with underscores, a zero fraction. */
function parseInteger(value: string): number | null {
  const m = /^\s*([+-]?\d+(?:_\d+)*)(?:\.0+)?\s*$/.exec(value);
  return m?.[1] === undefined ? null : Number(m[1].replace(/_/g, ""));
}

/** `n` when it lies in [ge, le]; otherwise pydantic's issue for the bound it breaks, and undefined. */
function inRange(
  n: number,
  ge: number,
  le: number,
  loc: Loc,
  input: unknown,
  issues: Issues,
): number | undefined {
  if (n < ge) {
    const msg = `Input should be greater than or equal to ${ge}`;
    issues.push({ type: "greater_than_equal", loc, msg, input, ctx: { ge } });
  } else if (n > le) {
    const msg = `Input should be less than or equal to ${le}`;
    issues.push({ type: "less_than_equal", loc, msg, input, ctx: { le } });
  } else return n;
  return undefined;
}

/** An integer query parameter in [ge, le] (unbounded above, as far as numbers are exact, without le). */
export function integer(o: Doc & { ge: number; le?: number; default: number }): Rule<number> {
  const le = o.le ?? Number.MAX_SAFE_INTEGER;
  return {
    doc: param(o, { type: "integer", minimum: o.ge, maximum: o.le, default: o.default }),
    parse(raw, loc, issues) {
      const input = lastValue(raw);
      if (input === undefined) return o.default;
      const n = parseInteger(input);
      if (n === null) {
        const msg = "Input should be a valid integer, unable to parse string as an integer";
        issues.push({ type: "int_parsing", loc, msg, input });
        return o.default;
      }
      return inRange(n, o.ge, le, loc, input, issues) ?? o.default;
    },
  };
}

/** One of a few values: a `Literal[...]` (literal_error) or an `Enum` (enum) to pydantic. */
function choose<T extends string>(
  options: readonly T[],
  kind: "literal_error" | "enum",
  input: unknown,
  loc: Loc,
  issues: Issues,
): T | undefined {
  if (typeof input === "string" && (options as readonly string[]).includes(input)) return input as T;
  const expected = options
    .map((o) => `'${o}'`)
    .join(", ")
    .replace(/, ([^,]*)$/, " or $1");
  issues.push({ type: kind, loc, msg: `Input should be ${expected}`, input, ctx: { expected } });
  return undefined;
}

/** A query parameter that is one of `options` (a `Literal`), `default` when absent. */
export function literal<T extends string>(
  options: readonly T[],
  o: Doc & { schema: object; default: T },
): Rule<T> {
  return {
    doc: param(o, { ...o.schema, default: o.default }),
    parse(raw, loc, issues) {
      const input = lastValue(raw);
      return input === undefined
        ? o.default
        : (choose(options, "literal_error", input, loc, issues) ?? o.default);
    },
  };
}

const GROUP_STARTS = [0, 9, 14, 19, 24] as const;
const GROUP_LENGTHS = [8, 4, 4, 4, 12] as const;

/**
 * Why a string is not a UUID, in the words of the Rust `uuid` crate that pydantic-core uses, so
 * the message matches pydantic's character for character.
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

const UUID_SCHEMA = { type: "string", format: "uuid" };

/** A UUID in the path, normalised; a test key may also give the sandbox's example id, which is not one. */
export function uuid(o: Doc & { sandboxId?: string }): Rule<string> {
  return {
    doc: param({ ...o, required: true }, UUID_SCHEMA),
    parse(raw, loc, issues, { sandbox }) {
      const input = typeof raw === "string" ? raw : "";
      const id = sandbox && input === o.sandboxId ? input : parseUuid(input);
      if (id !== null) return id;
      const error = uuidError(input);
      const msg = `Input should be a valid UUID, ${error}`;
      issues.push({ type: "uuid_parsing", loc, msg, input, ctx: { error } });
      return input;
    },
  };
}

/**
 * A query parameter that repeats (`?file_type=pdf&file_type=audio`), each value checked by `item`
 * at its index; undefined when absent.
 */
function list<T>(
  o: Doc & { items: object; max?: number },
  item: (input: string, loc: Loc, issues: Issues) => T | undefined,
): Rule<T[] | undefined> {
  return {
    doc: param(o, { type: "array", items: o.items, maxItems: o.max }, { style: "form", explode: true }),
    parse(raw, loc, issues) {
      const values = allValues(raw);
      if (o.max !== undefined && values.length > o.max) {
        const [max, actual] = [o.max, values.length];
        const msg = `List should have at most ${max} items after validation, not ${actual}`;
        issues.push({
          type: "too_long",
          loc,
          msg,
          input: values,
          ctx: { field_type: "List", max_length: max, actual_length: actual },
        });
        return undefined;
      }
      if (values.length === 0) return undefined;
      return values.flatMap((value, i) => item(value, [...loc, i], issues) ?? []);
    },
  };
}

/** Repeated UUIDs (pydantic's `list[UUID]` says only that an item is not one). */
export const uuidList = (o: Doc & { max: number }) =>
  list({ ...o, items: UUID_SCHEMA }, (input, loc, issues) => {
    const id = parseUuid(input);
    if (id === null) issues.push({ type: "uuid_parsing", loc, msg: "Input should be a valid UUID", input });
    return id ?? undefined;
  });

/** Repeated values of an `Enum`. */
export const enumList = <T extends string>(options: readonly T[], o: Doc & { items: object }) =>
  list(o, (input, loc, issues) => choose(options, "enum", input, loc, issues));

/** ISO 8601 as pydantic's datetime takes it from a string: a date, or a date and time with an optional offset. */
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * An instant as filters hold it (UTC, milliseconds, `Z`); null when it is not one. A date alone
 * is its midnight, and a time without an offset is UTC, as the file records' `created_at` are.
 */
export function parseInstant(value: string): string | null {
  const m = DATE_TIME.exec(value.trim());
  if (!m) return null;
  const [, year, month, day, hour = "00", minute = "00", second = "00", fraction = "", zone] = m;
  let offset = zone === undefined || zone.toUpperCase() === "Z" ? "Z" : zone;
  if (/^[+-]\d{4}$/.test(offset)) offset = `${offset.slice(0, 3)}:${offset.slice(3)}`;
  const millis = fraction.padEnd(3, "0").slice(0, 3);
  const text = `${year}-${month}-${day}T${hour}:${minute}:${second}.${millis}${offset}`;
  const time = Date.parse(text);
  if (Number.isNaN(time)) return null;
  // Date.parse rolls impossible dates over (Feb 30 becomes Mar 2): refuse those.
  const asUtc = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  if (asUtc.getUTCMonth() !== Number(month) - 1 || asUtc.getUTCDate() !== Number(day)) return null;
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return null;
  return new Date(time).toISOString();
}

/** An instant query parameter (parseInstant); undefined when absent. */
export function instant(o: Doc): Rule<string | undefined> {
  return {
    doc: param(o, { type: "string", format: "date-time" }),
    parse(raw, loc, issues) {
      const input = lastValue(raw);
      if (input === undefined) return undefined;
      const value = parseInstant(input);
      if (value !== null) return value;
      const msg =
        "Input should be a valid datetime or date (ISO 8601, e.g. 2026-11-25 or 2026-11-25T08:00:00Z)";
      issues.push({ type: "datetime_from_date_parsing", loc, msg, input });
      return undefined;
    },
  };
}

const CURSOR_TEXT = "The previous page's `next_cursor` (see the `Link` header): the next page.";
const notACursor = (loc: Loc, input: string): ValidationIssue => ({
  type: "value_error",
  loc,
  msg: "Value error, not a cursor of this list: give a `next_cursor` it answered with",
  input,
  ctx: { error: {} },
});

/** `cursor` of a list paged by keyset (files, deliveries, events): a next_cursor the list gave. */
export function cursor(o: Doc & { deprecated?: boolean } = {}): Rule<string | undefined> {
  return {
    doc: param(
      { description: CURSOR_TEXT, ...o },
      { type: "string", maxLength: PAGE_CURSOR_MAX_LENGTH },
      o.deprecated ? { deprecated: true } : {},
    ),
    parse(raw, loc, issues) {
      const input = lastValue(raw);
      if (input === undefined || !checkLength(loc, input, issues, 1, PAGE_CURSOR_MAX_LENGTH))
        return undefined;
      if (keysetFromCursor(input)) return input;
      issues.push(notACursor(loc, input));
      return undefined;
    },
  };
}

/**
 * `cursor` of a list in a fixed order (search results, a file's passages), read as the position
 * it names (at most `le`); the same list's `offset` says it another way, so only one may be given.
 */
export function positionCursor(o: { le?: number }): Rule<number | undefined> {
  return {
    doc: param(
      { description: `${CURSOR_TEXT} Instead of \`offset\`.` },
      { type: "string", maxLength: PAGE_CURSOR_MAX_LENGTH },
    ),
    parse(raw, loc, issues, { source }) {
      const input = lastValue(raw);
      if (input === undefined || !checkLength(loc, input, issues, 1, PAGE_CURSOR_MAX_LENGTH))
        return undefined;
      const position = positionFromCursor(input);
      if (position === null || position > (o.le ?? Number.MAX_SAFE_INTEGER)) {
        issues.push(notACursor(loc, input));
      } else if (source.offset !== undefined) {
        const msg = "Value error, give `cursor` or `offset`, not both";
        issues.push({ type: "value_error", loc, msg, input, ctx: { error: {} } });
      } else return position;
      return undefined;
    },
  };
}

/** The key of a metadata condition (`metadata.<key>`) or of an upload's metadata field. */
export const keyMismatch = (loc: Loc, key: string, pattern: RegExp): ValidationIssue => ({
  type: "string_pattern_mismatch",
  loc,
  msg: `String should match pattern '${pattern.source}'`,
  input: key,
  ctx: { pattern: pattern.source },
});

/**
 * Conditions named `<prefix><key>` (any key matching `keyPattern`, at most `max` of them), each a
 * non-empty string of at most `maxLength` characters without NUL (which PostgreSQL's text cannot hold).
 */
export function prefixed(o: {
  prefix: string;
  keyPattern: RegExp;
  max: number;
  maxLength: number;
}): Rule<Record<string, string> | undefined> {
  return {
    doc: null,
    parse(_raw, loc, issues, { source }) {
      const names = Object.keys(source).filter((name) => name.startsWith(o.prefix));
      if (names.length > o.max) {
        issues.push({
          type: "too_long",
          loc,
          msg: `At most ${o.max} ${o.prefix}<key> conditions are allowed, not ${names.length}`,
          input: names,
          ctx: { max_length: o.max, actual_length: names.length },
        });
        return undefined;
      }
      if (names.length === 0) return undefined;
      const conditions: Record<string, string> = {};
      for (const name of names) {
        const [key, value] = [name.slice(o.prefix.length), lastValue(source[name]) ?? ""];
        const at: Loc = [loc[0] ?? "query", name];
        if (!o.keyPattern.test(key)) issues.push(keyMismatch(at, key, o.keyPattern));
        else if (value.includes("\u0000")) {
          const msg = "Value error, the NUL character cannot be in a metadata value";
          issues.push({ type: "value_error", loc: at, msg, input: value, ctx: { error: {} } });
        } else if (checkLength(at, value, issues, 1, o.maxLength, value.length)) conditions[key] = value;
      }
      return conditions;
    },
  };
}

/** A JSON body's string field (`str`, at most `max` characters). */
export function stringField(o: {
  max: number;
  format?: string;
  description?: string;
}): Rule<string | undefined> {
  return {
    doc: { type: "string", format: o.format, maxLength: o.max, description: o.description },
    parse(input, loc, issues) {
      if (typeof input === "string") return checkLength(loc, input, issues, 0, o.max) ? input : undefined;
      issues.push({ type: "string_type", loc, msg: "Input should be a valid string", input });
      return undefined;
    },
  };
}

/** A JSON body's integer field in [ge, le] (pydantic's lax int: a whole float or digits in a string too). */
export function integerField(o: { ge: number; le: number; description: string }): Rule<number | undefined> {
  return {
    doc: { type: "integer", minimum: o.ge, maximum: o.le, description: o.description },
    parse(input, loc, issues) {
      let n: number | null = null;
      if (typeof input === "number" && Number.isFinite(input)) {
        if (!Number.isInteger(input)) {
          const msg = "Input should be a valid integer, got a number with a fractional part";
          issues.push({ type: "int_from_float", loc, msg, input });
          return undefined;
        }
        n = input;
      } else if (typeof input === "string") {
        n = parseInteger(input);
        if (n === null) {
          const msg = "Input should be a valid integer, unable to parse string as an integer";
          issues.push({ type: "int_parsing", loc, msg, input });
          return undefined;
        }
      } else {
        issues.push({ type: "int_type", loc, msg: "Input should be a valid integer", input });
        return undefined;
      }
      return inRange(n, o.ge, o.le, loc, input, issues);
    },
  };
}

/** A JSON body's boolean field (pydantic's strict bool: JSON's true and false). */
export function booleanField(o: { description: string }): Rule<boolean | undefined> {
  return {
    doc: { type: "boolean", description: o.description },
    parse(input, loc, issues) {
      if (typeof input === "boolean") return input;
      issues.push({ type: "bool_type", loc, msg: "Input should be a valid boolean", input });
      return undefined;
    },
  };
}

/** A JSON body's non-empty list of `Literal` values, each kept once. */
export function literalListField<T extends string>(
  options: readonly T[],
  o: { items: object; description?: string | undefined },
): Rule<T[] | undefined> {
  return {
    doc: { type: "array", minItems: 1, items: o.items, description: o.description },
    parse(input, loc, issues) {
      if (!Array.isArray(input)) {
        issues.push({ type: "list_type", loc, msg: "Input should be a valid list", input });
        return undefined;
      }
      if (input.length === 0) {
        const msg = "List should have at least 1 item after validation, not 0";
        const ctx = { field_type: "List", min_length: 1, actual_length: 0 };
        issues.push({ type: "too_short", loc, msg, input, ctx });
        return undefined;
      }
      const items = input.map((item: unknown, i) =>
        choose(options, "literal_error", item, [...loc, i], issues),
      );
      return [...new Set(items.filter((item) => item !== undefined))];
    },
  };
}
