import { z } from "zod";
import { FileFailureCodes } from "./errors.ts";
import { Locator } from "./locator.ts";

/**
 * The shapes the files endpoints answer with. The gateway's /openapi.json is generated from these
 * schemas (descriptions included), so a field added here is documented without another edit.
 */

/** Kinds of file Locus knows. A kind is accepted for upload only while an extractor for it exists. */
export const FileType = z.enum(["pdf", "image", "audio", "video"]);
export type FileType = z.infer<typeof FileType>;

export const FileStatus = z.enum(["pending", "processing", "ready", "failed"]);
export type FileStatus = z.infer<typeof FileStatus>;

export const FileError = z.object({ code: z.string(), message: z.string() });
export type FileError = z.infer<typeof FileError>;

/** The codes a failed file's `error.code` can carry, as the description of `error` lists them. */
const FAILURE_CODES = FileFailureCodes.map((code) => `\`${code}\``);

/** Timestamps are written by Locus with Date.toISOString(): UTC, with a `Z`. */
const timestamp = z.iso.datetime({ offset: true });

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
  error: FileError.nullable().describe(
    `Why processing failed, when status is \`failed\`. Codes: ${FAILURE_CODES.join(", ")}.`,
  ),
  created_at: timestamp,
  updated_at: timestamp,
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
  url: z.string().meta({ format: "uri" }),
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
  sandbox: z.literal(true).optional(),
});
export type FilePassagesDto = z.infer<typeof FilePassagesDto>;
