/**
 * What a request says about files, beyond the seed's parameters: the filters of search and the
 * file list (`file_id`, `file_type`, `created_after`, `created_before`, `metadata.<key>`), and an
 * upload's `metadata` form field. Errors are FastAPI's (see validation.ts): a client that parses
 * the seed's 422 bodies parses these too.
 */
import {
  FileType,
  METADATA_LIMITS,
  MetadataValue,
  SEARCH_LIMITS,
  type FileFilter,
  type FileMetadata,
} from "@locus/contracts";
import { RequestValidationError, type ValidationIssue } from "@locus/http";
import { lastValue, parseUuid } from "./validation.ts";

/** The prefix of a metadata condition's query parameter: `metadata.team=search`. */
export const METADATA_PARAM_PREFIX = "metadata.";

/** Every value of a query parameter that may repeat (`?file_id=a&file_id=b`), in order. */
function allValues(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === "string");
  return typeof value === "string" ? [value] : [];
}

const tooLong = (loc: ValidationIssue["loc"], input: unknown, max: number, actual: number) => ({
  type: "too_long",
  loc,
  msg: `List should have at most ${max} items after validation, not ${actual}`,
  input,
  ctx: { field_type: "List", max_length: max, actual_length: actual },
});

/** ISO 8601 as pydantic's datetime takes it from a string: a date, or a date and time with an optional offset. */
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * An instant for created_after/created_before, as filters hold it (UTC, milliseconds, `Z`); null
 * when it is not one. A date alone is its midnight, and a time without an offset is UTC, as the
 * file records' `created_at` are.
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

/**
 * The filter of `GET /api/search` and `GET /api/files`, or undefined when the query asks for none.
 * Throws a RequestValidationError listing every bad parameter.
 */
export function parseFileFilter(query: Record<string, unknown>): FileFilter | undefined {
  const issues: ValidationIssue[] = [];
  const filter: FileFilter = {};

  const ids = allValues(query.file_id);
  if (ids.length > SEARCH_LIMITS.fileIdsMax) {
    issues.push(tooLong(["query", "file_id"], ids, SEARCH_LIMITS.fileIdsMax, ids.length));
  } else if (ids.length > 0) {
    const parsed: string[] = [];
    ids.forEach((raw, i) => {
      const id = parseUuid(raw);
      if (id === null) {
        issues.push({
          type: "uuid_parsing",
          loc: ["query", "file_id", i],
          msg: "Input should be a valid UUID",
          input: raw,
        });
      } else parsed.push(id);
    });
    filter.fileIds = parsed;
  }

  const types = allValues(query.file_type);
  if (types.length > 0) {
    const expected = FileType.options
      .map((o) => `'${o}'`)
      .join(", ")
      .replace(/, ([^,]*)$/, " or $1");
    const parsed: FileType[] = [];
    types.forEach((raw, i) => {
      const type = FileType.safeParse(raw);
      if (type.success) parsed.push(type.data);
      else
        issues.push({
          type: "enum",
          loc: ["query", "file_type", i],
          msg: `Input should be ${expected}`,
          input: raw,
          ctx: { expected },
        });
    });
    filter.fileTypes = [...new Set(parsed)];
  }

  for (const name of ["created_after", "created_before"] as const) {
    const raw = lastValue(query[name]);
    if (raw === undefined) continue;
    const instant = parseInstant(raw);
    if (instant === null) {
      issues.push({
        type: "datetime_from_date_parsing",
        loc: ["query", name],
        msg: "Input should be a valid datetime or date (ISO 8601, e.g. 2026-11-25 or 2026-11-25T08:00:00Z)",
        input: raw,
      });
    } else if (name === "created_after") filter.createdAfter = instant;
    else filter.createdBefore = instant;
  }

  const conditions = Object.keys(query).filter((name) => name.startsWith(METADATA_PARAM_PREFIX));
  if (conditions.length > SEARCH_LIMITS.metadataFiltersMax) {
    issues.push({
      type: "too_long",
      loc: ["query", "metadata"],
      msg: `At most ${SEARCH_LIMITS.metadataFiltersMax} metadata.<key> conditions are allowed, not ${conditions.length}`,
      input: conditions,
      ctx: { max_length: SEARCH_LIMITS.metadataFiltersMax, actual_length: conditions.length },
    });
  } else if (conditions.length > 0) {
    const metadata: Record<string, string> = {};
    for (const name of conditions) {
      const key = name.slice(METADATA_PARAM_PREFIX.length);
      const value = lastValue(query[name]) ?? "";
      if (!METADATA_LIMITS.keyPattern.test(key)) {
        issues.push(keyMismatch(["query", name], key));
      } else if (value.includes("\u0000")) {
        issues.push({
          type: "value_error",
          loc: ["query", name],
          msg: "Value error, the NUL character cannot be in a metadata value",
          input: value,
          ctx: { error: {} },
        });
      } else if (value.length === 0 || value.length > METADATA_LIMITS.maxStringLength) {
        issues.push({
          type: value.length === 0 ? "string_too_short" : "string_too_long",
          loc: ["query", name],
          msg:
            value.length === 0
              ? "String should have at least 1 character"
              : `String should have at most ${METADATA_LIMITS.maxStringLength} characters`,
          input: value,
          ctx: value.length === 0 ? { min_length: 1 } : { max_length: METADATA_LIMITS.maxStringLength },
        });
      } else metadata[key] = value;
    }
    filter.metadata = metadata;
  }

  if (issues.length > 0) throw new RequestValidationError(issues);
  return Object.keys(filter).length > 0 ? filter : undefined;
}

const keyMismatch = (loc: ValidationIssue["loc"], key: string): ValidationIssue => ({
  type: "string_pattern_mismatch",
  loc,
  msg: `String should match pattern '${METADATA_LIMITS.keyPattern.source}'`,
  input: key,
  ctx: { pattern: METADATA_LIMITS.keyPattern.source },
});

/** The query parameters of a filter, as a client would send them again (the file list's next-page link). */
export function filterQuery(query: Record<string, unknown>): URLSearchParams {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    const filterParam =
      name === "file_id" ||
      name === "file_type" ||
      name === "created_after" ||
      name === "created_before" ||
      name.startsWith(METADATA_PARAM_PREFIX);
    if (filterParam) for (const v of allValues(value)) params.append(name, v);
  }
  return params;
}

/**
 * The upload's optional `metadata` form field: a JSON object of at most METADATA_LIMITS (bytes,
 * keys, values). Issues are located at ["body", "metadata", ...] as pydantic locates them.
 */
export function parseMetadataField(raw: string): FileMetadata {
  const loc = ["body", "metadata"] as const;
  const bytes = Buffer.byteLength(raw);
  if (bytes > METADATA_LIMITS.maxBytes) {
    throw new RequestValidationError([
      {
        type: "string_too_long",
        loc: [...loc],
        msg: `String should have at most ${METADATA_LIMITS.maxBytes} characters`,
        input: `${raw.slice(0, 64)}…`,
        ctx: { max_length: METADATA_LIMITS.maxBytes },
      },
    ]);
  }
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    throw new RequestValidationError([
      { type: "json_invalid", loc: [...loc], msg: `Invalid JSON: ${error}`, input: raw, ctx: { error } },
    ]);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new RequestValidationError([
      { type: "dict_type", loc: [...loc], msg: "Input should be a valid dictionary", input: value },
    ]);
  }
  const entries = Object.entries(value);
  if (entries.length > METADATA_LIMITS.maxKeys) {
    throw new RequestValidationError([
      {
        type: "too_long",
        loc: [...loc],
        msg: `Dictionary should have at most ${METADATA_LIMITS.maxKeys} items after validation, not ${entries.length}`,
        input: value,
        ctx: { field_type: "Dictionary", max_length: METADATA_LIMITS.maxKeys, actual_length: entries.length },
      },
    ]);
  }
  const issues: ValidationIssue[] = [];
  for (const [key, item] of entries) {
    if (!METADATA_LIMITS.keyPattern.test(key)) {
      issues.push(keyMismatch([...loc, key, "[key]"], key));
      continue;
    }
    if (!MetadataValue.safeParse(item).success) {
      issues.push({
        type: "value_error",
        loc: [...loc, key],
        msg:
          `Value error, a metadata value is a string (at most ${METADATA_LIMITS.maxStringLength} characters), ` +
          `a finite number, a boolean, or a list of at most ${METADATA_LIMITS.maxListItems} such strings`,
        input: item,
        ctx: { error: {} },
      });
    }
  }
  if (issues.length > 0) throw new RequestValidationError(issues);
  return value as FileMetadata;
}

/**
 * The `metadata` field came after the file part: the file streams to storage as it arrives, so
 * what describes it must come first (as curl -F and every Locus client send it, in order given).
 */
export const metadataAfterFile = (): ValidationIssue => ({
  type: "value_error",
  loc: ["body", "metadata"],
  msg: "Value error, the metadata field must come before the file part in the form",
  input: null,
  ctx: { error: {} },
});
