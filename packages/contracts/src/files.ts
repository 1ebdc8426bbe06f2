import { z } from "zod";
import { Locator } from "./locator.ts";

/** Kinds of file Locus knows. A kind is accepted for upload only while an extractor for it exists. */
export const FileType = z.enum(["pdf", "image", "audio", "video"]);
export type FileType = z.infer<typeof FileType>;

export const FileStatus = z.enum(["pending", "processing", "ready", "failed"]);
export type FileStatus = z.infer<typeof FileStatus>;

export const FileError = z.object({ code: z.string(), message: z.string() });
export type FileError = z.infer<typeof FileError>;

/** The file record as the HTTP interface shows it. */
export const FileRecordDto = z.object({
  id: z.string(),
  original_name: z.string(),
  status: FileStatus,
  file_type: FileType,
  mime_type: z.string(),
  size_bytes: z.number().int().min(0),
  page_count: z.number().int().min(0).nullable(),
  /** Length of a recording in seconds (audio and video); null for other kinds. */
  duration_s: z.number().min(0).nullable(),
  passage_count: z.number().int().min(0).nullable(),
  progress: z.number().min(0).max(1).nullable(),
  error: FileError.nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  sandbox: z.literal(true).optional(),
});
export type FileRecordDto = z.infer<typeof FileRecordDto>;

/** Limits of a page of a file's passages; the gateway validates them and /openapi.json states them. */
export const PASSAGE_PAGE_LIMITS = { limitMin: 1, limitMax: 500, limitDefault: 100 } as const;

/**
 * A page of a file's passages in reading order (`GET /api/files/{id}/passages`): a document's text
 * or a recording's transcript, each passage with its locator. Consecutive passages overlap a
 * little (a line, or a couple of seconds of speech), as they are indexed.
 */
export const FilePassagesDto = z.object({
  passages: z.array(z.object({ content: z.string(), locator: Locator })),
  /** Where the next page starts (pass it as `offset`), or null on the last page. */
  next_offset: z.number().int().min(0).nullable(),
  sandbox: z.literal(true).optional(),
});
export type FilePassagesDto = z.infer<typeof FilePassagesDto>;
