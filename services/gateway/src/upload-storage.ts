import type { Request } from "express";
import type { StorageEngine } from "multer";
import type { FileRecordDto } from "@locus/contracts";
import type { FilesApi } from "@locus/files";
import { inRequestScope } from "@locus/http";
import type { User } from "@locus/metadata-store";

type IncomingFile = Parameters<StorageEngine["_handleFile"]>[1];
type Callback = Parameters<StorageEngine["_handleFile"]>[2];

/** What the engine adds to multer's file object. */
export interface StoredUpload {
  dto: FileRecordDto;
  /** The stored file's id, so an aborted request can remove what it stored. */
  fileId?: string;
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
    // Called from the multipart parser's events: the upload is the request's own work again
    // (its trace, its request id in the files service's logs).
    done(
      inRequestScope(req, () =>
        this.files.upload(this.user, { originalName: file.originalname, body: file.stream }),
      ).then((dto) => ({ dto, fileId: dto.id })),
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
