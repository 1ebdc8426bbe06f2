import type { Readable } from "node:stream";
import type {
  FileFilter,
  FileMetadata,
  FilePassagesDto,
  FileRecordDto,
  PREVIEW_TTL_SECONDS,
} from "@locus/contracts";
import type { User } from "@locus/metadata-store";
import type { PreviewGrant } from "./preview-tokens.ts";

export interface UploadInput {
  originalName: string;
  body: Readable;
  /** Validated by the caller (the gateway); kept with the record and given to the index. */
  metadata?: FileMetadata | undefined;
}

export interface FileListOptions {
  limit: number;
  cursor?: string | undefined;
  /** Only files that pass it; the next page's cursor holds for the same filter only. */
  filter?: FileFilter | undefined;
}

export interface PreviewLink {
  url: string;
  /** The original's bytes, when `url` shows an office document's PDF rendition. */
  originalUrl?: string | undefined;
  expiresAt: Date;
  expiresIn: typeof PREVIEW_TTL_SECONDS;
}

export interface FileListPage {
  files: FileRecordDto[];
  /** Opaque cursor of the next page, or null on the last one. */
  nextCursor: string | null;
}

/**
 * What the gateway asks of the files service, in the records clients see. In one process the
 * FilesService answers directly; in the split shape FilesHttpClient carries the same calls to the
 * files process. Errors are LocusErrors either way.
 */
export interface FilesApi {
  /** Stores the file and records it `pending`; nothing processes it until announceUpload. */
  upload(user: User, input: UploadInput): Promise<FileRecordDto>;
  /** The upload's request completed: start processing the file. */
  announceUpload(user: User, fileId: string): Promise<void>;
  /** Undoes an upload whose request failed after the file was stored; gives its quota back. */
  discardUpload(user: User, fileId: string): Promise<void>;
  list(userId: string, options: FileListOptions): Promise<FileListPage>;
  get(userId: string, fileId: string): Promise<FileRecordDto>;
  delete(userId: string, fileId: string): Promise<void>;
  /**
   * A link that shows the file for an hour, while `grant` (the key or session that asked) stays
   * valid; baseUrl is where Locus is reached from outside.
   */
  previewLink(userId: string, fileId: string, baseUrl: string, grant: PreviewGrant): Promise<PreviewLink>;
  /** A page of a ready file's passages, in reading order (a document's text, a recording's transcript). */
  passages(userId: string, fileId: string, page: { offset: number; limit: number }): Promise<FilePassagesDto>;
}
