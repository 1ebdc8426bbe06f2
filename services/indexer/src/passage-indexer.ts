import {
  extractionBlobKey,
  renditionBlobKey,
  secondsBetween,
  type FileExtracted,
  type FileStages,
  type FileType,
} from "@locus/contracts";
import { readExtraction, type BlobStore } from "@locus/blob-store";
import { giveUpOnFile, startHeartbeat, type Bus, type Delivery } from "@locus/bus";
import type { FileRecord, FileRecordReader } from "@locus/metadata-store";
import type { Logger } from "@locus/runtime";
import type { FileAttributes, SearchIndex } from "@locus/search-index";
import { Attr, inSpan } from "@locus/telemetry";
import { withVectors, type PassageEmbedders } from "./passage-vectors.ts";

/** What search filters ask of a file, as the index stores it beside the file's passages. */
export const fileAttributes = (record: FileRecord): FileAttributes => ({
  fileType: record.fileType,
  createdAt: record.createdAt,
  metadata: record.metadata,
});

/** What the indexer tells whoever counts (metrics). */
export interface IndexerObserver {
  /** `count` passages of a file of `kind` were written into the search index. */
  passagesIndexed(kind: FileType, count: number): void;
}

/**
 * Writes a file's stored extraction into the search index with each passage's vectors (replacing
 * whatever the file had, so a redelivered message never duplicates passages), then reports the
 * file indexed. Removes a deleted file's passages and extraction.
 *
 * A file deleted while it was extracted or indexed is not indexed: its record is looked up before
 * and after writing its passages, and when it is gone, what was made for it is removed.
 */
export class PassageIndexer {
  constructor(
    private readonly blobs: BlobStore,
    private readonly index: SearchIndex,
    private readonly embedders: PassageEmbedders,
    private readonly bus: Bus,
    private readonly logger: Logger,
    private readonly files: FileRecordReader,
    private readonly heartbeatMs?: number,
    private readonly observer?: IndexerObserver,
  ) {}

  /** The file's record while it still exists (and is the same user's); null once it is gone. */
  private async liveRecord(fileId: string, userId: string) {
    const record = await this.files.getFileById(fileId);
    return record !== null && record.userId === userId ? record : null;
  }

  /**
   * Everything derived from a file: its passages, its stored extraction and an office document's
   * PDF rendition. An extractor may write the last two after the file's delete removed them (a
   * conversion takes seconds); its file.extracted then finds the record gone and clears them.
   */
  private async removeDerived(fileId: string, userId: string): Promise<void> {
    await this.index.deleteFilePassages({ fileId, userId });
    await this.blobs.delete(extractionBlobKey(userId, fileId));
    await this.blobs.delete(renditionBlobKey(userId, fileId));
  }

  async handle(delivery: Delivery<"file.extracted" | "file.deleted">): Promise<void> {
    switch (delivery.topic) {
      case "file.extracted": {
        const { message } = delivery;
        // The passages written and their vectors, in a span of their own (the bus's is the delivery's).
        return inSpan("index", { attributes: { [Attr.fileId]: message.fileId } }, (span) => {
          span.setAttribute(Attr.filePassages, message.passageCount);
          return this.indexFile(message, delivery.final, delivery.publishedAt);
        });
      }
      case "file.deleted": {
        // Everything derived from the file: a file deleted mid-processing may get its extraction
        // written after the files service removed the rest.
        const { fileId, userId } = delivery.message;
        await this.removeDerived(fileId, userId);
        return;
      }
    }
  }

  private async indexFile(
    message: FileExtracted,
    final: boolean,
    publishedAt: number | undefined,
  ): Promise<void> {
    const started = Date.now();
    // The extraction's stages, and this one's so far.
    const stagesSoFar = (): FileStages => ({
      ...message.stages,
      ...(publishedAt === undefined ? {} : { indexWaited: secondsBetween(publishedAt, started) }),
      indexing: secondsBetween(started, Date.now()),
    });
    const { fileId, userId, extractionKey, pageCount, durationS } = message;
    if (!(await this.blobs.stat(extractionKey))) {
      this.logger.info({ fileId }, "extraction is gone (file deleted); nothing to index");
      return;
    }
    const uploaded = await this.liveRecord(fileId, userId);
    if (!uploaded) {
      // Deleted while it was extracted: its extraction was written after the delete removed the rest.
      this.logger.info({ fileId }, "file deleted before it was indexed; removing its extraction");
      await this.removeDerived(fileId, userId);
      return;
    }
    // Indexing is the last tenth of the work.
    const stopHeartbeat = startHeartbeat(this.bus, { fileId, userId }, () => 0.9, this.heartbeatMs);
    try {
      // A remote embedding engine that keeps failing costs the file its remote vectors on the last
      // attempt only; before that the attempt fails and the bus tries again later.
      const passages = withVectors(readExtraction(this.blobs, extractionKey), this.embedders, {
        onRemoteFailure: final ? "skip" : "throw",
        onSkip: (err) =>
          this.logger.warn(
            { err, fileId },
            "the remote embedding engine failed on the last attempt: indexing without its vectors",
          ),
      });
      // The file's kind, upload time and metadata go in beside its passages: search filters on them.
      const passageCount = await this.index.replaceFilePassages(
        { fileId, userId, attributes: fileAttributes(uploaded) },
        passages,
      );
      const record = await this.liveRecord(fileId, userId);
      if (!record) {
        // Deleted while its passages were written (by a request another process served).
        this.logger.info({ fileId }, "file deleted while it was indexed; removing its passages");
        await this.removeDerived(fileId, userId);
        return;
      }
      await this.bus.publish("file.indexed", {
        fileId,
        userId,
        passageCount,
        pageCount,
        ...(durationS === undefined ? {} : { durationS }),
        stages: stagesSoFar(),
        // No offline engine here: the meaning stage (the encoder group) gives the vectors.
        ...(this.embedders.local ? {} : { vectorsLater: true }),
      });
      this.observer?.passagesIndexed(record.fileType, passageCount);
    } catch (err) {
      return await giveUpOnFile({ bus: this.bus, logger: this.logger }, { final }, { fileId, userId }, err, {
        code: "indexing_failed",
        message: "Locus could not index this file's text.",
        log: "indexing failed on its last attempt",
        stages: stagesSoFar(),
      });
    } finally {
      stopHeartbeat();
    }
  }
}
