import type {
  AiVectorsState,
  FileError,
  FileFilter,
  FileMetadata,
  FileStatus,
  FileType,
} from "@locus/contracts";
import type { NewOutboxEntry } from "./outbox-store.ts";

export interface FileRecord {
  id: string;
  userId: string;
  originalName: string;
  fileType: FileType;
  mimeType: string;
  sizeBytes: number;
  blobKey: string;
  status: FileStatus;
  error: FileError | null;
  pageCount: number | null;
  /** Length of a recording in seconds; null for other kinds. */
  durationS: number | null;
  passageCount: number | null;
  progress: number | null;
  /**
   * Where a ready file's passages stand for ai search's meaning matching, where the meaning stage
   * gives them their vectors after the file is ready; absent elsewhere.
   */
  aiVectors?: AiVectorsState;
  /** What the uploader said about the file; `{}` when nothing. Set at upload, never changed. */
  metadata: FileMetadata;
  createdAt: string;
  updatedAt: string;
}

export type FileUpdate = Partial<
  Pick<FileRecord, "status" | "error" | "pageCount" | "durationS" | "passageCount" | "progress">
> & {
  /** null: the file's passages are not waiting for the meaning stage (see FileRecord.aiVectors). */
  aiVectors?: AiVectorsState | null;
  /** Sets the count of ClaimedFile.requeues (0: an operator's retry gives the file a fresh start). */
  requeues?: number;
};

/**
 * What a writer saw of a file, which must still hold for its update to apply (a compare-and-set in
 * one statement): status writes never rest on a record read earlier, so a report handled late (a
 * progress report after the file became ready, a second worker's failure after a success) changes
 * nothing, and the writer is told so by a null.
 */
export interface FileExpectation {
  /** The statuses the file may be in. */
  status: readonly FileStatus[];
  /** The file's updatedAt as the writer read it: nobody changed it since. */
  updatedAt?: string;
  /** Progress only moves forward: the stored progress is unset or at most this. */
  progressUpTo?: number;
  /** The file's passages are in this state for ai search (see FileRecord.aiVectors). */
  aiVectors?: AiVectorsState;
}

/** A file claimed for re-publishing (claimUnfinishedFile). */
export type ClaimedFile = FileRecord & {
  /**
   * Times its work was re-queued after it had started (status `processing`), this claim included,
   * since its upload or an operator's retry: each one a process that stopped with the file unfinished.
   */
  requeues: number;
};

export interface FilePage {
  files: FileRecord[];
  /** Opaque cursor for the next page, or null on the last page. */
  nextCursor: string | null;
}

/**
 * What other services may read of the files aggregate, which the files service alone writes: the
 * indexer asks whether a file still exists, search joins its hits to their files. A shared read
 * model, on purpose (docs/decisions/008-file-records-read-model.md).
 */
export interface FileRecordReader {
  /** Any user's file: for workers that act on messages, never for request handlers. */
  getFileById(fileId: string): Promise<FileRecord | null>;
  /** The user's files among `fileIds` (others' and missing ones left out), in no order. */
  getFiles(userId: string, fileIds: readonly string[]): Promise<FileRecord[]>;
}

/** The files aggregate: the record of every uploaded file and how far its processing got. */
export interface FileStore extends FileRecordReader {
  /**
   * Records a new file, with the bus messages its creation calls for (`outbox`, see OutboxStore),
   * in one transaction: both are stored or neither.
   */
  createFile(record: FileRecord, outbox?: readonly NewOutboxEntry[]): Promise<void>;
  getFile(userId: string, fileId: string): Promise<FileRecord | null>;
  /** Newest first; with a filter, only the files that pass it (the cursor pages within the same filter). */
  listFiles(
    userId: string,
    options: { limit: number; cursor?: string | undefined; filter?: FileFilter | undefined },
  ): Promise<FilePage>;
  /**
   * Files left pending or processing, oldest first: work to pick up again after a crash. With
   * updatedBefore, only those that have not moved since then (stalled work).
   */
  listUnfinishedFiles(options: { limit: number; updatedBefore?: string }): Promise<FileRecord[]>;
  /**
   * Claims an unfinished file for re-publishing: touches it only if it has not changed since it was
   * read (its `updated_at` is still `seenUpdatedAt`), in one statement. Of several sweepers that
   * read the same stalled file, one gets the record back; the others get null and leave it alone.
   */
  claimUnfinishedFile(fileId: string, seenUpdatedAt: string): Promise<ClaimedFile | null>;
  /** Every user's files in one status, by id, a page at a time (afterId: the last id of the previous page). */
  listFilesWithStatus(
    status: FileStatus,
    options: { limit: number; afterId?: string },
  ): Promise<FileRecord[]>;
  /**
   * Changes the file if it is as `expected` (see FileExpectation), and returns it as it now is;
   * null when it is gone or no longer as expected (read it again to tell which).
   */
  updateFile(fileId: string, update: FileUpdate, expected: FileExpectation): Promise<FileRecord | null>;
  deleteFile(userId: string, fileId: string): Promise<FileRecord | null>;
}
