import type { Request } from "express";
import type { StorageEngine } from "multer";
import { Errors, type FileRecordDto } from "@locus/contracts";
import { cleanFileName, MAX_NAME_LENGTH, sniffKind, type FilesApi } from "@locus/files";
import type { Principal } from "./authenticate.ts";
import { sandboxUpload } from "./sandbox.ts";

type IncomingFile = Parameters<StorageEngine["_handleFile"]>[1];
type Callback = Parameters<StorageEngine["_handleFile"]>[2];

/** What the engine adds to multer's file object. */
export interface StoredUpload {
  dto: FileRecordDto;
  /** Set for live uploads, so an aborted request can remove what it stored. */
  fileId?: string;
}

/**
 * A multer storage engine that hands the part's stream straight to the files service (live keys)
 * or reads it through without keeping it (test keys), so no upload is buffered in memory or on a
 * temporary disk. Test keys get the same checks as live ones (size, kind, name) and nothing else.
 */
export class UploadStorage implements StorageEngine {
  constructor(
    private readonly principal: Principal,
    private readonly files: FilesApi,
    private readonly maxUploadBytes: number,
  ) {}

  _handleFile(_req: Request, file: IncomingFile, callback: Callback): void {
    // multer's engine interface is callback-based: settle the promise into the callback.
    const done = (result: Promise<StoredUpload>) =>
      void result.then(
        (stored) => callback(null, stored as unknown as Partial<IncomingFile>),
        (err: unknown) => callback(err as Error),
      );
    if (this.principal.sandbox) done(this.readSandbox(file));
    else {
      done(
        this.files
          .upload(this.principal.user, { originalName: file.originalname, body: file.stream })
          .then((dto) => ({ dto, fileId: dto.id })),
      );
    }
  }

  _removeFile(
    _req: Request,
    file: IncomingFile & Partial<StoredUpload>,
    callback: (error: Error | null) => void,
  ): void {
    if (!file.fileId) return callback(null);
    this.files.discardUpload(this.principal.user, file.fileId).then(
      () => callback(null),
      () => callback(null),
    );
  }

  private async readSandbox(file: IncomingFile): Promise<StoredUpload> {
    const name = cleanFileName(file.originalname);
    let head = Buffer.alloc(0);
    let size = 0;
    for await (const chunk of file.stream) {
      const bytes = chunk as Buffer;
      if (head.length < 4100) head = Buffer.concat([head, bytes]).subarray(0, 4100);
      size += bytes.length;
      if (size > this.maxUploadBytes) {
        throw Errors.payloadTooLarge(this.maxUploadBytes);
      }
    }
    if (name.length === 0) throw Errors.fileUnnamed();
    if (name.length > MAX_NAME_LENGTH) throw Errors.fileNameTooLong(MAX_NAME_LENGTH);
    const { kind, mimeType } = await sniffKind(head);
    return { dto: sandboxUpload({ originalName: name, fileType: kind, mimeType, sizeBytes: size }) };
  }
}
