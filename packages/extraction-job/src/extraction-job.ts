import { Readable } from "node:stream";
import {
  CONSUMER_GROUPS,
  extractionBlobKey,
  secondsBetween,
  FileRejectedError,
  type ExtractedPassage,
  type ExtractorTarget,
  type FileStages,
  type FileType,
  type FileUploaded,
} from "@locus/contracts";
import type { BlobStore } from "@locus/blob-store";
import { abandonFile, giveUpOnFile, startHeartbeat, type Bus, type Delivery } from "@locus/bus";
import type { Logger } from "@locus/runtime";
import { activeSpan, Attr, failSpan, inSpan } from "@locus/telemetry";

const PROGRESS_INTERVAL_MS = 1000;

/** What an extraction found out about the file besides its passages. */
export interface ExtractionSummary {
  /** Pages of a paged file; null for kinds without pages. */
  pageCount: number | null;
  /** Length of a recording in seconds. */
  durationS?: number;
}

/**
 * Reads a file's bytes and yields its passages; `progress` takes the share done (0–1); `file` is
 * what the upload message says of it (the MIME type sniffed from its bytes) and its ids (for logs,
 * and for keys of further blobs the extractor stores, such as an office document's PDF rendition).
 * Returns the summary as the generator's final value. `data` is what the job's BlobRead gives:
 * the whole file in memory by default.
 */
export type Extract<Data = Buffer> = (
  data: Data,
  progress: (done: number) => void,
  file: { mimeType: string; fileId: string; userId: string },
) => AsyncGenerator<ExtractedPassage, ExtractionSummary>;

/** How a job hands the file's bytes to its extractor. */
export type BlobRead<Data> = (blobs: BlobStore, key: string) => Promise<Data>;

/** The whole file in one Buffer: for readers that need all of it at once (PDF, images). */
export const wholeBlob: BlobRead<Buffer> = async (blobs, key) => {
  const chunks: Buffer[] = [];
  for await (const chunk of await blobs.get(key)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

/**
 * The file as the blob store's stream, for readers that write it where they need it (recordings
 * and videos, streamed to a temporary file for ffmpeg): it never has to fit in memory. The job
 * destroys the stream when the extraction ends, read to its end or not.
 */
export const streamedBlob: BlobRead<Readable> = async (blobs, key) => {
  const stream = await blobs.get(key);
  // Until the extractor starts reading, a failing transfer must not crash the process as an
  // unhandled 'error'; its reader still gets the error (a pipeline sees a stream already failed).
  stream.on("error", () => undefined);
  return stream;
};

/** What an extraction job tells whoever counts (metrics). */
export interface ExtractionObserver {
  /** A file of `kind` was extracted: its pages or its length in seconds, as its summary says. */
  fileExtracted(kind: FileType, summary: ExtractionSummary): void;
}

export interface ExtractionJobDeps {
  blobs: BlobStore;
  bus: Bus;
  logger: Logger;
  /** How people call the kind, for messages: "PDF", "image". */
  kindName: string;
  /** How often a file being extracted says it is alive (a quarter of the stall delay, say). */
  heartbeatMs?: number | undefined;
  observer?: ExtractionObserver | undefined;
  /** What reads this kind (the PDF reader, the OCR and speech engines), said on each extraction's span. */
  engines?: { pdf?: string | undefined; ocr?: string | undefined; speech?: string | undefined } | undefined;
}

/**
 * What every extractor module is given, the same for each kind: where the bytes and extractions
 * live, the bus, its logger, how many deliveries a file gets, how often a file in hand says it is
 * alive, and who is told what each file held. Each kind's module adds its engines and limits.
 */
export interface ExtractorModuleDeps {
  blobs: BlobStore;
  bus: Bus;
  logger: Logger;
  maxAttempts: number;
  /** How often a file in hand says it is alive (see ExtractionJobDeps). */
  heartbeatMs?: number | undefined;
  /** Told what each extracted file held (metrics). */
  observer?: ExtractionObserver | undefined;
}

/**
 * What every extractor does around its own reading: fetch the bytes, report progress on the file
 * record, store the extraction in the blob store as JSON lines (one passage each; only its key
 * travels on the bus, so a 1,000-page file never has to fit in a message), and say how it ended.
 * A FileRejectedError fails the file with its reason; anything else is retried by the bus, and on
 * the last attempt fails the file and goes to dead letters.
 */
export class ExtractionJob<Data = Buffer> {
  constructor(
    private readonly deps: ExtractionJobDeps,
    private readonly extract: Extract<Data>,
    private readonly read: BlobRead<Data> = wholeBlob as BlobRead<unknown> as BlobRead<Data>,
  ) {}

  /**
   * Takes the uploads of one kind from the bus: the consumer group of that extractor, `concurrency`
   * files at a time, failing a file after `maxAttempts` deliveries.
   */
  subscribe(group: ExtractorTarget, options: { concurrency: number; maxAttempts: number }): Promise<void> {
    return this.deps.bus.subscribe(
      {
        group,
        topics: CONSUMER_GROUPS[group],
        concurrency: options.concurrency,
        maxAttempts: options.maxAttempts,
        abandon: ({ message }, reason) =>
          abandonFile(this.deps, message, `${this.deps.kindName} extraction`, reason),
      },
      (delivery) => this.handle(delivery),
    );
  }

  /** One attempt at a file, in a span `extract <kind>` with the file's id and the engines. */
  handle(delivery: Delivery<`file.uploaded.${FileType}`>): Promise<void> {
    const { fileId, kind } = delivery.message;
    const { pdf, ocr, speech } = this.deps.engines ?? {};
    const attributes = {
      [Attr.fileId]: fileId,
      [Attr.fileKind]: kind,
      ...(pdf ? { [Attr.pdfEngine]: pdf } : {}),
      ...(ocr ? { [Attr.ocrEngine]: ocr } : {}),
      ...(speech ? { [Attr.speechEngine]: speech } : {}),
    };
    return inSpan(`extract ${kind}`, { attributes }, () => this.attempt(delivery));
  }

  private async attempt(delivery: Delivery<`file.uploaded.${FileType}`>): Promise<void> {
    const { fileId, userId, blobKey } = delivery.message;
    const ref = { fileId, userId };
    const started = Date.now();
    try {
      await this.run(delivery.message, started, delivery.publishedAt);
    } catch (err) {
      if (err instanceof FileRejectedError) {
        const span = activeSpan();
        if (span) failSpan(span, err);
        await this.deps.bus.publish("file.failed", {
          ...ref,
          error: { code: err.code, message: err.message },
          // The "file failed" line then says how long the file waited and was read before it failed.
          stages: stagesSoFar(started, delivery.publishedAt),
        });
        return;
      }
      return giveUpOnFile(this.deps, delivery, ref, err, {
        code: "extraction_failed",
        message: `Locus could not extract text from this ${this.deps.kindName}.`,
        log: `${this.deps.kindName} extraction failed on its last attempt`,
        logFields: { blobKey },
        stages: stagesSoFar(started, delivery.publishedAt),
      });
    }
  }

  /** `started`: when this attempt began; `publishedAt`: when the upload's message was (if known). */
  private async run(message: FileUploaded, started: number, publishedAt: number | undefined): Promise<void> {
    const { blobs, bus, logger } = this.deps;
    const { fileId, userId, blobKey } = message;
    const stat = await blobs.stat(blobKey);
    if (!stat) {
      // Deleted before we got to it (then nobody is listening), or lost: either way, never leave
      // the file waiting.
      logger.warn({ fileId }, "file bytes are gone; failing the file");
      throw new FileRejectedError(
        "file_missing",
        "The file's bytes are missing from storage; upload it again.",
      );
    }
    await bus.publish("file.progress", { fileId, userId, progress: 0 });
    const data = await this.read(blobs, blobKey);
    let lastReport = Date.now();
    // Extraction is most of the work; indexing takes the last few percent.
    let progress = 0;
    const pending: Promise<void>[] = [];
    const extraction = this.extract(
      data,
      (done) => {
        progress = 0.9 * Math.min(1, done);
        if (Date.now() - lastReport < PROGRESS_INTERVAL_MS) return;
        lastReport = Date.now();
        pending.push(bus.publish("file.progress", { fileId, userId, progress }));
      },
      { mimeType: message.mimeType, fileId, userId },
    );
    // A page or a chunk can take minutes without a word of progress: say the work is alive.
    const stopHeartbeat = startHeartbeat(bus, { fileId, userId }, () => progress, this.deps.heartbeatMs);
    let passageCount = 0;
    let summary: ExtractionSummary = { pageCount: null };
    async function* lines(): AsyncGenerator<string> {
      let extracted = false;
      try {
        for (;;) {
          const next = await extraction.next();
          if (next.done) {
            summary = next.value;
            extracted = true;
            return;
          }
          passageCount += 1;
          yield `${JSON.stringify(next.value)}\n`;
        }
      } finally {
        // A store that fails midway closes this stream early: the extraction must end with it (its
        // finally stops ffmpeg, gives a PDF thread back), not wait at its next passage for good.
        if (!extracted) await extraction.return(summary);
      }
    }
    const extractionKey = extractionBlobKey(userId, fileId);
    try {
      await blobs.put(extractionKey, Readable.from(lines()));
    } finally {
      stopHeartbeat();
      // A streamed file an extractor gave up on before its end must not hold its connection open.
      if (data instanceof Readable) data.destroy();
    }
    await Promise.all(pending);
    activeSpan()?.setAttributes({
      [Attr.filePassages]: passageCount,
      ...(summary.pageCount === null ? {} : { [Attr.filePages]: summary.pageCount }),
    });
    await bus.publish("file.extracted", {
      fileId,
      userId,
      extractionKey,
      passageCount,
      pageCount: summary.pageCount,
      ...(summary.durationS === undefined ? {} : { durationS: summary.durationS }),
      stages: stagesSoFar(started, publishedAt),
    });
    this.deps.observer?.fileExtracted(message.kind, summary);
  }
}

/** The stages of an extraction that began at `started`, up to now (`waited` when the bus says when the upload's message was published). */
function stagesSoFar(started: number, publishedAt: number | undefined): FileStages {
  return {
    ...(publishedAt === undefined ? {} : { waited: secondsBetween(publishedAt, started) }),
    extraction: secondsBetween(started, Date.now()),
  };
}
