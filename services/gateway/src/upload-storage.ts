import type { Request } from "express";
import type { StorageEngine } from "multer";
import type { FileMetadata, FileRecordDto } from "@locus/contracts";
import type { FilesApi } from "@locus/files";
import { inRequestScope } from "@locus/http";
import type { User } from "@locus/metadata-store";
import { parseMetadataField } from "./upload-metadata.ts";
import { lastValue } from "./operations/rules.ts";

type IncomingFile = Parameters<StorageEngine["_handleFile"]>[1];
type Callback = Parameters<StorageEngine["_handleFile"]>[2];

/** What the engine adds to multer's file object. */
export interface StoredUpload {
  dto: FileRecordDto;
  /** The stored file's id, so an aborted request can remove what it stored. */
  fileId?: string;
  /** How many `metadata` fields had arrived when the file began (the last of them is in `dto`). */
  metadataFieldsRead: number;
}

/**
 * A multer storage engine that hands the part's stream straight to the files API (the files
 * service for live keys; the sandbox, which reads it through without keeping it, for test keys),
 * so no upload is buffered in memory or on a temporary disk.
 */
export class UploadStorage implements StorageEngine {
  constructor(
    private readonly user: User,
    private readonly files: FilesApi,
  ) {}

  _handleFile(req: Request, file: IncomingFile, callback: Callback): void {
    // multer's engine interface is callback-based: settle the promise into the callback.
    const done = (result: Promise<StoredUpload>) =>
      void result.then(
        (stored) => callback(null, stored as unknown as Partial<IncomingFile>),
        (err: unknown) => callback(err as Error),
      );
    // Fields before the file part are in req.body already (multer fills it as they arrive).
    const field = (req.body as Record<string, unknown> | undefined)?.metadata;
    const metadataFieldsRead = metadataFieldCount(req.body);
    const metadataRead = metadataFieldsRead > 0;
    // Called from the multipart parser's events: the upload is the request's own work again
    // (its trace, its request id in the files service's logs).
    done(
      inRequestScope(req, async () => {
        let metadata: FileMetadata | undefined;
        try {
          metadata = metadataRead ? parseMetadataField(lastValue(field) ?? "") : undefined;
        } catch (err) {
          file.stream.resume();
          throw err;
        }
        return this.files.upload(this.user, { originalName: file.originalname, body: file.stream, metadata });
      }).then((dto) => ({ dto, fileId: dto.id, metadataFieldsRead })),
    );
  }

  _removeFile(
    _req: Request,
    file: IncomingFile & Partial<StoredUpload>,
    callback: (error: Error | null) => void,
  ): void {
    if (!file.fileId) return callback(null);
    this.files.discardUpload(this.user, file.fileId).then(
      () => callback(null),
      () => callback(null),
    );
  }
}

/** How many `metadata` fields a form has delivered so far (multer gathers repeats into an array). */
export function metadataFieldCount(body: unknown): number {
  const field = (body as Record<string, unknown> | undefined)?.metadata;
  if (field === undefined) return 0;
  return Array.isArray(field) ? field.length : 1;
}
