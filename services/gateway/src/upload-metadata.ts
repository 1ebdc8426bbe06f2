/**
 * What an upload's multipart form says besides its file: the optional `metadata` field, and the
 * `file` part missing or given as a plain field. Errors are FastAPI's (see operations/rules.ts): a
 * client that parses the other 422 bodies parses these too.
 */
import { METADATA_LIMITS, MetadataValue, type FileMetadata } from "@locus/contracts";
import { keyMismatch, RequestValidationError, type ValidationIssue } from "./operations/rules.ts";

/** A plain form field named `file` where the upload's file part belongs: said as FastAPI says it. */
export const notAnUpload = (input: string): ValidationIssue => ({
  type: "value_error",
  loc: ["body", "file"],
  msg: "Value error, Expected UploadFile, received: <class 'str'>",
  input,
  ctx: { error: {} },
});

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
      issues.push(keyMismatch([...loc, key, "[key]"], key, METADATA_LIMITS.keyPattern));
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
