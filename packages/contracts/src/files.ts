import { z } from "zod";
import { FileFailureCodes } from "./errors.ts";
import { FILE_KINDS } from "./kinds.ts";
import { Locator } from "./locator.ts";
import { NEXT_CURSOR_TEXT } from "./paging.ts";

/**
 * The shapes the files endpoints answer with. The gateway's /openapi.json is generated from these
 * schemas (descriptions included), so a field added here is documented without another edit.
 */

/** Kinds of file Locus knows: those that have an extractor (EXTRACTORS). */
export const FileType = z.enum(FILE_KINDS);
export type FileType = z.infer<typeof FileType>;

/** The longest a file's name may be, in characters, once cleaned (cleanFileName). */
export const MAX_NAME_LENGTH = 1024;

/**
 * Control characters never belong in a name shown back to people or put in a header; nor do the
 * invisible direction marks and overrides, which make "invoice\u202efdp.exe" display as
 * "invoiceexe.pdf".
 */
export function cleanFileName(name: string): string {
  // eslint-disable-next-line no-control-regex
  return name.replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, "").trim();
}

export const FileStatus = z.enum(["pending", "processing", "ready", "failed"]);
export type FileStatus = z.infer<typeof FileStatus>;

/**
 * Where a ready file's passages stand for ai mode's meaning matching, where the meaning stage runs
 * (they get their vectors after the file is ready): `pending`, then `ready`.
 */
export const AiVectorsState = z.enum(["pending", "ready"]);
export type AiVectorsState = z.infer<typeof AiVectorsState>;

export const FileError = z.object({ code: z.string(), message: z.string() });
export type FileError = z.infer<typeof FileError>;

/** The codes a failed file's `error.code` can carry, as the description of `error` lists them. */
const FAILURE_CODES = FileFailureCodes.map((code) => `\`${code}\``);

/** Timestamps are written by Locus with Date.toISOString(): UTC, with a `Z`. */
const timestamp = z.iso.datetime({ offset: true });

/**
 * Limits of a file's `metadata` (the upload's optional JSON object): few, short, flat values, so a
 * record stays small and every index backend can filter on them the same way. Keys are safe as
 * field names everywhere (no dots: Elasticsearch would read one as a path).
 */
export const METADATA_LIMITS = {
  maxBytes: 4096,
  maxKeys: 32,
  // `__proto__` is refused: as a key of a plain object it would be the prototype, not a key.
  keyPattern: /^(?!__proto__$)[A-Za-z_][A-Za-z0-9_-]{0,63}$/,
  maxStringLength: 256,
  maxListItems: 32,
} as const;

/** A metadata string: bounded, and without U+0000, which PostgreSQL's text cannot hold. */
const metadataString = z
  .string()
  .max(METADATA_LIMITS.maxStringLength)
  .refine((s) => !s.includes("\u0000"), "Input should not contain the NUL character");

export const MetadataValue = z.union([
  metadataString,
  z.number().refine(Number.isFinite, "Input should be a finite number"),
  z.boolean(),
  z.array(metadataString).max(METADATA_LIMITS.maxListItems),
]);
export type MetadataValue = z.infer<typeof MetadataValue>;

export const FileMetadata = z
  .record(z.string().regex(METADATA_LIMITS.keyPattern), MetadataValue)
  .describe(
    "What the uploader said about the file (the upload's `metadata` field): a flat object of strings, " +
      "numbers, booleans and lists of strings; `{}` when none was given. Search and the file list " +
      "filter on it with `metadata.<key>=<value>`.",
  );
export type FileMetadata = z.infer<typeof FileMetadata>;

/**
 * A metadata value as filters compare it: a string as it is, a number as JavaScript and JSON write
 * it (`2024`, `1.5`), a boolean as `true`/`false`; a list matches each of its items. One rule for
 * every backend, so `metadata.year=2024` finds the same files in SQLite, PostgreSQL and Elasticsearch.
 */
export function metadataTerms(metadata: FileMetadata): Array<[key: string, value: string]> {
  const terms: Array<[string, string]> = [];
  for (const [key, value] of Object.entries(metadata)) {
    for (const item of Array.isArray(value) ? value : [value]) terms.push([key, String(item)]);
  }
  return terms;
}

/** An instant as filters hold it: ISO 8601 in UTC with milliseconds, as Locus writes `created_at`. */
const instant = z.iso.datetime();

/**
 * Which files a search or a file list covers; every condition given must hold. Applied inside each
 * backend's query, before results are ranked and cut to `limit`, never to the cut list afterwards.
 * A schema as well as a type: it crosses process boundaries (gateway to files and search).
 */
export const FileFilter = z.object({
  /** Only these files (any of them). */
  fileIds: z.array(z.string()).optional(),
  /** Only files of these kinds (any of them). */
  fileTypes: z.array(FileType).optional(),
  /** Uploaded strictly after this instant. */
  createdAfter: instant.optional(),
  /** Uploaded strictly before this instant. */
  createdBefore: instant.optional(),
  /** For each key, the file's metadata has this value under it (see metadataTerms). */
  metadata: z.record(z.string(), z.string()).optional(),
});
export type FileFilter = z.infer<typeof FileFilter>;

/** True when the filter restricts nothing. */
export const isEmptyFilter = (filter: FileFilter | undefined): boolean =>
  !filter ||
  (!filter.fileIds?.length &&
    !filter.fileTypes?.length &&
    filter.createdAfter === undefined &&
    filter.createdBefore === undefined &&
    Object.keys(filter.metadata ?? {}).length === 0);

/**
 * Whether a file passes a filter, judged in memory: for answers built without an index (test keys'
 * mock files). Backends apply filters in their own queries, by the same rules.
 */
export function fileMatchesFilter(
  file: { id: string; fileType: FileType; createdAt: string; metadata: FileMetadata },
  filter: FileFilter | undefined,
): boolean {
  if (!filter) return true;
  if (filter.fileIds?.length && !filter.fileIds.includes(file.id)) return false;
  if (filter.fileTypes?.length && !filter.fileTypes.includes(file.fileType)) return false;
  if (filter.createdAfter !== undefined && !(file.createdAt > filter.createdAfter)) return false;
  if (filter.createdBefore !== undefined && !(file.createdAt < filter.createdBefore)) return false;
  const terms = metadataTerms(file.metadata);
  return Object.entries(filter.metadata ?? {}).every(([key, value]) =>
    terms.some(([k, v]) => k === key && v === value),
  );
}

/** The file record as the HTTP interface shows it. */
export const FileRecordDto = z.object({
  id: z.string().describe("UUID; `file_sandbox_example` for test keys."),
  original_name: z.string(),
  status: FileStatus,
  file_type: FileType,
  mime_type: z.string(),
  size_bytes: z.number().int().min(0),
  page_count: z.number().int().min(0).nullable(),
  duration_s: z
    .number()
    .min(0)
    .nullable()
    .describe("Length of a recording in seconds (audio and video), once processed; null otherwise."),
  passage_count: z.number().int().min(0).nullable(),
  progress: z
    .number()
    .min(0)
    .max(1)
    .nullable()
    .describe("Share of the work done while `processing`: pages read, for long scans too."),
  metadata: FileMetadata,
  error: FileError.nullable().describe(
    `Why processing failed, when status is \`failed\`. Codes: ${FAILURE_CODES.join(", ")}.`,
  ),
  created_at: timestamp,
  updated_at: timestamp,
  ai_vectors: AiVectorsState.optional().describe(
    "Extension. Where the file's passages stand for `ai` search's meaning matching when the " +
      "sentence encoder gives them their vectors after the file is ready (LOCUS_EMBEDDER=encoder): " +
      "`pending` while they are encoded (ai search finds them by keyword meanwhile), `ready` once " +
      "every passage with text has its vector. Absent where passages get their vectors as they " +
      "are indexed.",
  ),
  sandbox: z.literal(true).optional(),
});
export type FileRecordDto = z.infer<typeof FileRecordDto>;

/** `POST /api/files/upload`: the new record, wrapped. */
export const UploadedFileDto = z.object({ file: FileRecordDto });
export type UploadedFileDto = z.infer<typeof UploadedFileDto>;

/** `GET /api/files`: a bare array (the next page's cursor travels in headers). */
export const FileListDto = z.array(FileRecordDto);
export type FileListDto = z.infer<typeof FileListDto>;

/** A page of the file list between services, where the cursor travels in the body. */
export const FileListPageDto = z.object({ files: FileListDto, next_cursor: z.string().nullable() });
export type FileListPageDto = z.infer<typeof FileListPageDto>;

/** `DELETE /api/files/{file_id}`. */
export const FileDeletedDto = z.object({
  message: z.string(),
  id: z.string(),
  sandbox: z.literal(true).optional(),
});
export type FileDeletedDto = z.infer<typeof FileDeletedDto>;

/** How long a preview link works, in seconds. */
export const PREVIEW_TTL_SECONDS = 3600;

/** `GET /api/files/{file_id}/preview-url`. */
export const PreviewUrlDto = z.object({
  // Documented as a URI but not checked as one: the link is built from the host the request
  // named, and a link that does not parse is the client's to discover, as it has always been.
  url: z
    .string()
    .meta({ format: "uri" })
    .describe(
      "Shows the file inline. For an office document (file_type `document`, converted to PDF), shows " +
        "the PDF rendition its locators' pages and lines point into, once it has been converted.",
    ),
  original_url: z
    .string()
    .meta({ format: "uri" })
    .optional()
    .describe(
      "Extension. Present when `url` shows an office document's PDF rendition: the original file's " +
        "bytes, with its own type, valid as long as `url`.",
    ),
  expires_at: timestamp,
  expires_in: z.literal(PREVIEW_TTL_SECONDS),
  sandbox: z.literal(true).optional(),
});
export type PreviewUrlDto = z.infer<typeof PreviewUrlDto>;

/** Limits of a page of a file's passages; the gateway validates them and /openapi.json states them. */
export const PASSAGE_PAGE_LIMITS = { limitMin: 1, limitMax: 500, limitDefault: 100 } as const;

/**
 * A page of a file's passages in reading order (`GET /api/files/{id}/passages`): a document's text
 * or a recording's transcript, each passage with its locator. Consecutive passages overlap a
 * little (a line, or a couple of seconds of speech), as they are indexed.
 */
export const FilePassagesDto = z.object({
  passages: z.array(z.object({ content: z.string(), locator: Locator })),
  next_offset: z
    .number()
    .int()
    .min(0)
    .nullable()
    .describe("The `offset` of the next page, or null on the last page."),
  next_cursor: z
    .string()
    .nullable()
    .describe(`The same next page as \`next_offset\`, by the paging rule of every list. ${NEXT_CURSOR_TEXT}`),
  sandbox: z.literal(true).optional(),
});
export type FilePassagesDto = z.infer<typeof FilePassagesDto>;
