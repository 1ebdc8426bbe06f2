import { z } from "zod";
import { FileError, FileRecordDto, FileType } from "./files.ts";
import { EXTRACTORS } from "./kinds.ts";

/**
 * Every message on the bus, pinned to its payload. Consumers validate what they receive with these
 * schemas, so a malformed message is dead-lettered instead of half-processed.
 * Version 1; a breaking change adds a new topic version rather than changing this one.
 */
const FileRef = { fileId: z.uuid(), userId: z.uuid() };

export const FileUploaded = z.object({
  ...FileRef,
  kind: FileType,
  blobKey: z.string().min(1),
  mimeType: z.string(),
});
export type FileUploaded = z.infer<typeof FileUploaded>;

export const FileProgress = z.object({ ...FileRef, progress: z.number().min(0).max(1) });
export type FileProgress = z.infer<typeof FileProgress>;

/**
 * Seconds each stage of a file's processing took, as far as it has gone; each stage adds its own.
 * `waited`: from the upload's message to the extraction that succeeded (earlier attempts
 * included); `indexWaited`: from the extraction's message to the indexing that succeeded.
 */
export const FileStages = z.object({
  waited: z.number().min(0).optional(),
  extraction: z.number().min(0).optional(),
  indexWaited: z.number().min(0).optional(),
  indexing: z.number().min(0).optional(),
});
export type FileStages = z.infer<typeof FileStages>;

/** A stage's seconds from `from` to `to` (ms since the epoch); never negative across two clocks. */
export const secondsBetween = (from: number, to: number): number => Math.max(0, to - from) / 1000;

export const FileExtracted = z.object({
  ...FileRef,
  /** Blob key of the stored extraction (JSON lines, one passage each): never inline in a message. */
  extractionKey: z.string().min(1),
  passageCount: z.number().int().min(0),
  pageCount: z.number().int().min(0).nullable(),
  /** Length of a recording in seconds (audio and video); absent for other kinds. */
  durationS: z.number().min(0).nullable().optional(),
  stages: FileStages.optional(),
});
export type FileExtracted = z.infer<typeof FileExtracted>;

export const FileIndexed = z.object({
  ...FileRef,
  passageCount: z.number().int().min(0),
  pageCount: z.number().int().min(0).nullable(),
  durationS: z.number().min(0).nullable().optional(),
  stages: FileStages.optional(),
  /** The passages were written without their offline vectors: the meaning stage adds them. */
  vectorsLater: z.boolean().optional(),
});
export type FileIndexed = z.infer<typeof FileIndexed>;

/** The meaning stage gave a file's passages their vectors (`encoded`: how many it stored now). */
export const FileEncoded = z.object({
  ...FileRef,
  encoded: z.number().int().min(0),
});
export type FileEncoded = z.infer<typeof FileEncoded>;

export const FileFailed = z.object({
  ...FileRef,
  error: FileError,
  /** The stages the file went through before it failed, as far as whoever failed it knows them. */
  stages: FileStages.optional(),
});
export type FileFailed = z.infer<typeof FileFailed>;

export const FileDeleted = z.object({ ...FileRef });
export type FileDeleted = z.infer<typeof FileDeleted>;

/** What webhooks announce about a file (see FileEvent). */
export const FILE_EVENT_TYPES = ["file.ready", "file.failed", "file.deleted"] as const;
export const FileEventType = z.enum(FILE_EVENT_TYPES);
export type FileEventType = z.infer<typeof FileEventType>;

/**
 * A change to a file, published by the files service once the change is recorded, for webhooks.
 * `id` names the event: the same on every redelivery of the report that caused it, so a consumer
 * can deliver it once per endpoint. `file` is the record as clients see it (for `file.deleted`,
 * as it was before the delete).
 */
export const FileEvent = z.object({
  id: z.uuid(),
  type: FileEventType,
  ...FileRef,
  occurredAt: z.iso.datetime({ offset: true }),
  file: FileRecordDto,
});
export type FileEvent = z.infer<typeof FileEvent>;

/** Each kind's uploads travel on a topic of their own, which its extractor's group consumes. */
export type UploadedTopic = `file.uploaded.${FileType}`;

export function uploadedTopic(kind: FileType): UploadedTopic {
  return `file.uploaded.${kind}`;
}

const uploadedTopics = Object.fromEntries(
  FileType.options.map((kind) => [uploadedTopic(kind), FileUploaded]),
) as {
  [Kind in FileType as `file.uploaded.${Kind}`]: typeof FileUploaded;
};

export const MessageSchemas = {
  ...uploadedTopics,
  "file.progress": FileProgress,
  "file.extracted": FileExtracted,
  "file.indexed": FileIndexed,
  "file.encoded": FileEncoded,
  "file.failed": FileFailed,
  "file.deleted": FileDeleted,
  "file.event": FileEvent,
} as const;

export type Topic = keyof typeof MessageSchemas;
export type MessageOf<T extends Topic> = z.infer<(typeof MessageSchemas)[T]>;

/** Each extractor's group (named as its target) takes its kind's uploads. */
function extractorGroups() {
  return Object.fromEntries(
    FileType.options.map((kind): [string, readonly string[]] => [
      EXTRACTORS[kind].target,
      [uploadedTopic(kind)],
    ]),
  ) as { [Kind in FileType as (typeof EXTRACTORS)[Kind]["target"]]: readonly [`file.uploaded.${Kind}`] };
}

/**
 * Who consumes what: each consumer group gets its own durable queue bound to these topics. Kept in
 * one place so a broker can declare every queue before any message is published: a message
 * published to a topic nobody has bound yet would otherwise be dropped.
 */
export const CONSUMER_GROUPS = {
  "files-status": ["file.progress", "file.indexed", "file.encoded", "file.failed"],
  ...extractorGroups(),
  indexer: ["file.extracted", "file.deleted"],
  // The meaning stage: declared and consumed only where it runs (see meaningStageRuns).
  encoder: ["file.indexed"],
  webhooks: ["file.event"],
} as const satisfies Record<string, readonly Topic[]>;

export type ConsumerGroup = keyof typeof CONSUMER_GROUPS;
