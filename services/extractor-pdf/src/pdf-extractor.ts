import { Readable } from "node:stream";
import { extractionBlobKey, type FileUploaded } from "@locus/contracts";
import type { BlobStore } from "@locus/blob-store";
import type { Bus, Delivery } from "@locus/bus";
import type { Logger } from "@locus/runtime";
import { PdfRejectedError, type ExtractionPool } from "./extraction-pool.ts";

const PROGRESS_INTERVAL_MS = 1000;

async function readBlob(blobs: BlobStore, key: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await blobs.get(key)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Turns an uploaded PDF into stored passages. The extraction is written to the blob store as JSON
 * lines (one passage each) and only its key travels on the bus, so a 1,000-page PDF never has to
 * fit in one message. A PDF that cannot be read fails the file with the reason; anything else is
 * retried by the bus, and on the last attempt fails the file and goes to dead letters.
 */
export class PdfExtractor {
  constructor(
    private readonly blobs: BlobStore,
    private readonly bus: Bus,
    private readonly pool: ExtractionPool,
    private readonly logger: Logger,
  ) {}

  async handle(delivery: Delivery<"file.uploaded.pdf">): Promise<void> {
    const { fileId, userId, blobKey } = delivery.message;
    const ref = { fileId, userId };
    try {
      await this.extract(delivery.message);
    } catch (err) {
      if (err instanceof PdfRejectedError) {
        await this.bus.publish("file.failed", { ...ref, error: { code: err.code, message: err.message } });
        return;
      }
      if (!delivery.final) throw err;
      this.logger.error({ err, fileId, blobKey }, "PDF extraction failed on its last attempt");
      await this.bus.publish("file.failed", {
        ...ref,
        error: { code: "extraction_failed", message: "Locus could not extract text from this PDF." },
      });
      // Still a failure for the bus: the message goes to dead letters, where operators can see it.
      throw err;
    }
  }

  private async extract(message: FileUploaded): Promise<void> {
    const { fileId, userId, blobKey } = message;
    const stat = await this.blobs.stat(blobKey);
    if (!stat) {
      // Deleted before we got to it (then nobody is listening), or lost: either way, never leave
      // the file waiting.
      this.logger.warn({ fileId }, "file bytes are gone; failing the file");
      await this.bus.publish("file.failed", {
        fileId,
        userId,
        error: {
          code: "file_missing",
          message: "The file's bytes are missing from storage; upload it again.",
        },
      });
      return;
    }
    await this.bus.publish("file.progress", { fileId, userId, progress: 0 });
    const data = await readBlob(this.blobs, blobKey);
    let lastReport = Date.now();
    const pending: Promise<void>[] = [];
    const extraction = this.pool.extract(
      new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
      (page, pageCount) => {
        if (Date.now() - lastReport < PROGRESS_INTERVAL_MS) return;
        lastReport = Date.now();
        // Extraction is most of the work; indexing takes the last few percent.
        pending.push(
          this.bus.publish("file.progress", { fileId, userId, progress: 0.9 * (page / pageCount) }),
        );
      },
    );
    let passageCount = 0;
    let pageCount = 0;
    async function* lines(): AsyncGenerator<string> {
      for (;;) {
        const next = await extraction.next();
        if (next.done) {
          pageCount = next.value;
          return;
        }
        passageCount += 1;
        yield `${JSON.stringify(next.value)}\n`;
      }
    }
    const extractionKey = extractionBlobKey(userId, fileId);
    await this.blobs.put(extractionKey, Readable.from(lines()));
    await Promise.all(pending);
    await this.bus.publish("file.extracted", {
      fileId,
      userId,
      extractionKey,
      passageCount,
      pageCount,
    });
  }
}
