import { randomUUID } from "node:crypto";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import {
  cleanFileName,
  extractionBlobKey,
  fileBlobKey,
  Errors,
  MAX_NAME_LENGTH,
  nextPosition,
  OFFICE_MIME_TYPES,
  publicLocator,
  renditionBlobKey,
  uploadedTopic,
  type FilePassagesDto,
  type FileRecordDto,
  type FileUploaded,
} from "@locus/contracts";
import { BlobNotFoundError, readExtraction, type BlobStore, type ByteRange } from "@locus/blob-store";
import { abandonFile, type Bus } from "@locus/bus";
import type { FileRecord, MetadataStore, Plan, User } from "@locus/metadata-store";
import type { Logger } from "@locus/runtime";
import { Attr, inSpan, type Span } from "@locus/telemetry";
import { toFileDto } from "./file-dto.ts";
import type { FileListOptions, FileListPage, FilesApi, PreviewLink, UploadInput } from "./files-api.ts";
import { previewContentType, renditionName, SignedPreviewLinks, type PreviewLinks } from "./preview-links.ts";
import { publishFileEvent } from "./file-events.ts";
import type { PreviewGrant, PreviewTokens } from "./preview-tokens.ts";
import type { OutboxRelay } from "./outbox-relay.ts";
import type { FilesObserver } from "./status-consumer.ts";
import { sniffKind, SNIFF_BYTES } from "./sniff-kind.ts";
import { ByteLimit, peekStream } from "./stream-utils.ts";

export interface FilesServiceOptions {
  maxUploadBytes: number;
  monthlyUploadQuota: Record<Plan, number>;
  /**
   * How preview links are made (see previewLinksFor). Without it, they point back at Locus
   * (/previews/<token>, signed with the service's PreviewTokens), which serves the bytes.
   */
  previewLinks?: PreviewLinks | undefined;
  /** Told of accepted uploads (metrics). */
  observer?: FilesObserver | undefined;
  /**
   * Hands the outbox to the bus: publishes an upload's processing request as soon as its request
   * completes (OutboxRelay). Without it, the request waits for a relay to find it due.
   */
  relay?: Pick<OutboxRelay, "leaseUntil" | "publishClaimed"> | undefined;
  /** See UPLOAD_HOLD_MS (its default). */
  uploadHoldMs?: number | undefined;
}

/**
 * How long an upload's processing request is held after its file is stored, for the rest of its
 * request (the parts after the file) to arrive: a request that breaks off is discarded with its
 * file, never processed. If the files process dies before the request completes, the relay
 * publishes it once the hold is over.
 */
export const UPLOAD_HOLD_MS = 10_000;

export interface PreviewContent {
  record: FileRecord;
  /** What is shown: the file's own type, or application/pdf for an office document's rendition. */
  contentType: string;
  /** The name it is shown under. */
  fileName: string;
  sizeBytes: number;
  /** Stream of the requested bytes (the range, or the whole file). */
  open(range?: ByteRange): Promise<Readable>;
}

/** The message that asks the extractors of the file's kind to extract it. */
export const processingRequest = (record: FileRecord): FileUploaded => ({
  fileId: record.id,
  userId: record.userId,
  kind: record.fileType,
  blobKey: record.blobKey,
  mimeType: record.mimeType,
});

const monthOf = (d: Date) => d.toISOString().slice(0, 7);
const startOfNextMonth = (d: Date) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));

/**
 * File records and their bytes: upload, list, read, delete, preview. Owns the record's status,
 * which it moves as processing messages arrive (see status-consumer.ts).
 */
export class FilesService implements FilesApi {
  private readonly links: PreviewLinks;

  constructor(
    private readonly store: MetadataStore,
    private readonly blobs: BlobStore,
    private readonly bus: Bus,
    private readonly previews: PreviewTokens,
    private readonly options: FilesServiceOptions,
    private readonly logger: Logger,
  ) {
    this.links = options.previewLinks ?? new SignedPreviewLinks(previews);
  }

  /**
   * Streams the upload into the blob store, then records it `pending`. The quota is taken first
   * and given back if anything fails, and a failed upload leaves no blob and no record.
   *
   * Processing is recorded here (held in the outbox) but asked for by announceUpload, once the
   * whole request has arrived: a request that breaks off after its file part (the client leaves, a
   * later part breaks a limit) is discarded and refunded, and so must never have cost an extraction.
   */
  upload(user: User, input: UploadInput): Promise<FileRecordDto> {
    return inSpan("upload", {}, (span) => this.storeUpload(user, input, span));
  }

  private async storeUpload(user: User, input: UploadInput, span: Span): Promise<FileRecordDto> {
    const name = cleanFileName(input.originalName);
    if (name.length === 0) {
      input.body.resume();
      throw Errors.fileUnnamed();
    }
    if (name.length > MAX_NAME_LENGTH) {
      input.body.resume();
      throw Errors.fileNameTooLong(MAX_NAME_LENGTH);
    }

    const now = new Date();
    const month = monthOf(now);
    const quota = this.options.monthlyUploadQuota[user.plan];
    if (!(await this.store.reserveUpload(user.id, month, quota))) {
      input.body.resume();
      const reset = startOfNextMonth(now);
      throw Errors.quotaExceeded(user.plan, quota, reset, now);
    }

    const fileId = randomUUID();
    const blobKey = fileBlobKey(user.id, fileId);
    let stored = false;
    try {
      const { head, stream } = await peekStream(input.body, SNIFF_BYTES);
      const { kind, mimeType } = await sniffKind(head, name);
      const limit = new ByteLimit(this.options.maxUploadBytes, () =>
        Errors.payloadTooLarge(this.options.maxUploadBytes),
      );
      // pipeline, not pipe: when the upload breaks off (client gone, form cut short) the error must
      // reach the blob store's write, which then removes what it wrote; with pipe it would escape
      // as an uncaught exception. The failure itself surfaces through `put` below.
      pipeline(stream, limit).catch(() => undefined);
      span.setAttributes({ [Attr.fileId]: fileId, [Attr.fileKind]: kind });
      const { sizeBytes } = await this.blobs.put(blobKey, limit);
      span.setAttribute(Attr.fileBytes, sizeBytes);
      stored = true;
      if (sizeBytes === 0) throw Errors.fileEmpty();

      const record: FileRecord = {
        id: fileId,
        userId: user.id,
        originalName: name,
        fileType: kind,
        mimeType,
        sizeBytes,
        blobKey,
        status: "pending",
        error: null,
        pageCount: null,
        durationS: null,
        passageCount: null,
        progress: null,
        metadata: input.metadata ?? {},
        createdAt: now.toISOString(),
        updatedAt: now.toISOString(),
      };
      // With its processing request, held until the request completes (announceUpload): stored
      // together, so no file is recorded that nothing will process.
      await this.store.createFile(record, [
        {
          id: randomUUID(),
          topic: uploadedTopic(record.fileType),
          message: processingRequest(record),
          fileId: record.id,
          availableAt: new Date(now.getTime() + (this.options.uploadHoldMs ?? UPLOAD_HOLD_MS)).toISOString(),
        },
      ]);
      return toFileDto(record);
    } catch (err) {
      input.body.resume();
      await this.store.releaseUpload(user.id, month);
      if (stored) await this.blobs.delete(blobKey);
      throw err;
    }
  }

  /**
   * The upload's request completed: its processing request, stored with the file, is claimed and
   * published now; one the bus refuses is published by an outbox relay (of any files process) once
   * its claim lapses. A file already moving (announced before, or picked up by the stall sweep) is
   * left alone.
   */
  async announceUpload(user: User, fileId: string): Promise<void> {
    const record = await this.record(user.id, fileId);
    if (record.status !== "pending") return;
    this.options.observer?.uploadAccepted(record.fileType);
    const { relay } = this.options;
    if (!relay) return;
    await relay.publishClaimed(await this.store.claimFileOutbox(record.id, relay.leaseUntil()));
  }

  /**
   * Publishes the message that starts extraction again (the stall sweep). If the bus refuses, the
   * record stays as it is and the next sweep publishes it again.
   */
  async requestProcessing(record: FileRecord): Promise<void> {
    const topic = uploadedTopic(record.fileType);
    try {
      await this.bus.publish(topic, processingRequest(record));
    } catch (err) {
      this.options.observer?.publishFailed(topic);
      this.logger.error(
        { err, fileId: record.id },
        "could not publish file for processing; recovery will retry",
      );
    }
  }

  async list(userId: string, options: FileListOptions): Promise<FileListPage> {
    const page = await this.store.listFiles(userId, options);
    return { files: page.files.map(toFileDto), nextCursor: page.nextCursor };
  }

  async get(userId: string, fileId: string): Promise<FileRecordDto> {
    return toFileDto(await this.record(userId, fileId));
  }

  async passages(
    userId: string,
    fileId: string,
    page: { offset: number; limit: number },
  ): Promise<FilePassagesDto> {
    const record = await this.record(userId, fileId);
    if (record.status !== "ready") {
      throw Errors.fileNotReady(record.status);
    }
    const passages: FilePassagesDto["passages"] = [];
    let position = 0;
    try {
      // Read as far as the page and one passage more, to know whether there is a next page.
      for await (const passage of readExtraction(this.blobs, extractionBlobKey(userId, fileId))) {
        if (position >= page.offset + page.limit) {
          return { passages, ...nextPosition(position) };
        }
        if (position >= page.offset)
          passages.push({ content: passage.content, locator: publicLocator(passage.locator) });
        position += 1;
      }
    } catch (err) {
      if (err instanceof BlobNotFoundError) throw Errors.fileNotFound();
      throw err;
    }
    return { passages, ...nextPosition(null) };
  }

  private async record(userId: string, fileId: string): Promise<FileRecord> {
    const record = await this.store.getFile(userId, fileId);
    // Another user's file is "not found" too: never reveal that it exists.
    if (!record) throw Errors.fileNotFound();
    return record;
  }

  /** Removes the record, the bytes and the extraction now; the passages follow through file.deleted. */
  async delete(userId: string, fileId: string): Promise<void> {
    // A file is deleted once: its id alone names the event. Announced as soon as the record is
    // gone, before the bytes are removed: a failure there must not cost the event, since a client
    // that tries the delete again gets 404. (A discarded upload is not announced: its client never
    // saw it.)
    await this.deleteRecord(userId, fileId, (record) =>
      publishFileEvent(this.bus, "file.deleted", record, ""),
    );
  }

  private async deleteRecord(
    userId: string,
    fileId: string,
    announce?: (record: FileRecord) => Promise<void>,
  ): Promise<FileRecord> {
    const record = await this.store.deleteFile(userId, fileId);
    if (!record) throw Errors.fileNotFound();
    await announce?.(record);
    await Promise.all([
      this.blobs.delete(record.blobKey),
      this.blobs.delete(extractionBlobKey(userId, fileId)),
      // An office document's PDF rendition (a no-op for other kinds).
      this.blobs.delete(renditionBlobKey(userId, fileId)),
    ]);
    await this.bus.publish("file.deleted", { fileId, userId });
    return record;
  }

  /**
   * Undoes an upload whose request failed after the file was stored (a later part was bad, the
   * client went away): removes it like a delete and gives its quota back.
   */
  async discardUpload(user: User, fileId: string): Promise<void> {
    const record = await this.deleteRecord(user.id, fileId);
    await this.store.releaseUpload(user.id, monthOf(new Date(record.createdAt)));
  }

  async previewLink(
    userId: string,
    fileId: string,
    baseUrl: string,
    grant: PreviewGrant,
  ): Promise<PreviewLink> {
    const record = await this.record(userId, fileId);
    const rendition = await this.renditionOf(record);
    return this.links.link(record, { fileId, userId, grant, baseUrl }, rendition);
  }

  /**
   * The key of the PDF an office document was converted to, once it exists (the conversion has
   * run); undefined for every other file, whose preview is the file itself.
   */
  private async renditionOf(record: FileRecord): Promise<string | undefined> {
    if (!OFFICE_MIME_TYPES.has(record.mimeType)) return undefined;
    const key = renditionBlobKey(record.userId, record.id);
    return (await this.blobs.stat(key)) ? key : undefined;
  }

  /** Whether the key or session a link was asked with is still good. */
  private async grantHolds(userId: string, grant: PreviewGrant): Promise<boolean> {
    if ("sessionId" in grant) {
      const found = await this.store.findActiveSession(grant.sessionId, new Date().toISOString());
      return found?.user.id === userId;
    }
    const keys = await this.store.listKeys(userId);
    return keys.some((k) => k.id === grant.keyId && !k.revokedAt);
  }

  /** What a preview token unlocks: the file, or why not (bad or expired token, file gone). */
  async openPreview(token: string): Promise<PreviewContent | "invalid" | "gone"> {
    const claims = await this.previews.verify(token);
    if (!claims || !(await this.grantHolds(claims.userId, claims.grant))) return "invalid";
    const record = await this.store.getFile(claims.userId, claims.fileId);
    if (!record) return "gone";
    const rendition = claims.original ? undefined : await this.renditionOf(record);
    const key = rendition ?? record.blobKey;
    const stat = await this.blobs.stat(key);
    if (!stat) return "gone";
    return {
      record,
      contentType: rendition ? "application/pdf" : previewContentType(record.mimeType),
      fileName: rendition ? renditionName(record.originalName) : record.originalName,
      sizeBytes: stat.sizeBytes,
      open: (range) => this.blobs.get(key, range),
    };
  }

  /**
   * Publishes again files left `pending` or `processing`: all of them after a restart on the
   * in-process bus (its messages died with the process), or those that have not moved for
   * stalledAfterMs (a lost message, a crashed worker). Consumers are idempotent, so a file that
   * was in fact still moving is only redone.
   *
   * With `maxRequeues` (the in-process bus, swept once at each start), a file whose started work
   * has been re-queued more often than that is failed instead (`processing_abandoned`): the
   * process stopped with it unfinished each time, so it may be what stops it, and must not do so
   * at every start. On RabbitMQ the broker counts such deliveries (see @locus/bus's abandon).
   */
  async recoverUnfinished(stalledAfterMs?: number, maxRequeues?: number): Promise<number> {
    const updatedBefore =
      stalledAfterMs === undefined ? undefined : new Date(Date.now() - stalledAfterMs).toISOString();
    const records = await this.store.listUnfinishedFiles({
      limit: 1000,
      ...(updatedBefore ? { updatedBefore } : {}),
    });
    let claimed = 0;
    for (const record of records) {
      // Claimed atomically (and touched, so the next sweep waits a full period): when several
      // files processes sweep at once, each stalled file is published again by one of them.
      const mine = await this.store.claimUnfinishedFile(record.id, record.updatedAt);
      if (!mine) continue;
      claimed += 1;
      if (maxRequeues !== undefined && mine.requeues > maxRequeues) {
        await abandonFile(
          { bus: this.bus, logger: this.logger },
          { fileId: mine.id, userId: mine.userId },
          "processing",
          `the process stopped ${mine.requeues} times while the file was processing`,
        );
        continue;
      }
      await this.requestProcessing(mine);
    }
    if (claimed > 0) this.logger.info({ count: claimed }, "re-queued unfinished files");
    return claimed;
  }

  /**
   * Announces again, to the meaning stage, every ready file whose passages still wait for their
   * vectors (`ai_vectors: pending`): for a bus whose messages die with the process (the encoder
   * reads only the passages still without a vector, so a file cut short costs what is left). The
   * files-status group gets the announcement too, and ignores it: the file is ready already.
   */
  async recoverPendingVectors(): Promise<number> {
    let announced = 0;
    for (let afterId: string | undefined; ;) {
      const page = await this.store.listFilesWithStatus("ready", {
        limit: 1000,
        ...(afterId === undefined ? {} : { afterId }),
      });
      for (const record of page) {
        if (record.aiVectors !== "pending") continue;
        await this.bus.publish("file.indexed", {
          fileId: record.id,
          userId: record.userId,
          passageCount: record.passageCount ?? 0,
          pageCount: record.pageCount,
          durationS: record.durationS,
          vectorsLater: true,
        });
        announced += 1;
      }
      if (page.length < 1000) break;
      afterId = page.at(-1)?.id;
    }
    if (announced > 0)
      this.logger.info({ count: announced }, "files waiting for their vectors announced again");
    return announced;
  }
}
