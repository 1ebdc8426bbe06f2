import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { fileBlobKey, type FileStages } from "@locus/contracts";
import { LocalBlobStore } from "@locus/blob-store";
import { InProcessBus } from "@locus/bus";
import { createLogger } from "@locus/runtime";
// The helper alone: the package's index loads every factory and server into this unit suite.
import { pollUntil } from "@locus/testing/polling";
import { ExtractionJob, FileRejectedError, streamedBlob } from "../src/index.ts";

const logger = createLogger("test", "silent");
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "locus-job-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("says a file is alive while a long step gives no progress, and stops when the work ends", async () => {
  const blobs = new LocalBlobStore(join(dir, "blobs"));
  const bus = new InProcessBus(logger);
  const seen: { topic: string; progress?: number; stages?: FileStages | undefined }[] = [];
  await bus.subscribe(
    { group: "files-status", topics: ["file.progress", "file.extracted"], concurrency: 1, maxAttempts: 1 },
    (delivery) => {
      seen.push({
        topic: delivery.topic,
        ...(delivery.topic === "file.progress" ? { progress: delivery.message.progress } : {}),
        ...(delivery.topic === "file.extracted" ? { stages: delivery.message.stages } : {}),
      });
      return Promise.resolve();
    },
  );
  const userId = randomUUID();
  const fileId = randomUUID();
  await blobs.put(fileBlobKey(userId, fileId), Readable.from([Buffer.from("%PDF-1.7 ...")]));
  const job = new ExtractionJob({ blobs, bus, logger, kindName: "PDF", heartbeatMs: 50 }, async function* (
    _data,
    progress,
  ) {
    progress(0.5);
    // One long step with nothing to report, as an OCR page or a speech chunk can be.
    await new Promise((resolve) => setTimeout(resolve, 400));
    yield { content: "Done at last.", locator: { page: 1, line: 1, line_end: 1, source: "text" } };
    return { pageCount: 1 };
  });
  await job.handle({
    topic: "file.uploaded.pdf",
    message: {
      fileId,
      userId,
      kind: "pdf",
      blobKey: fileBlobKey(userId, fileId),
      mimeType: "application/pdf",
    },
    attempt: 1,
    final: true,
    // Published two seconds before this attempt began.
    publishedAt: Date.now() - 2000,
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  await bus.close();
  // Its stages: the wait since the upload's message, and the extraction (over 0.4 s of steps).
  const stages = seen.at(-1)?.stages;
  expect(stages?.waited).toBeGreaterThanOrEqual(2);
  expect(stages?.waited).toBeLessThan(60);
  expect(stages?.extraction).toBeGreaterThanOrEqual(0.4);
  expect(stages?.extraction).toBeLessThan(60);
  const beats = seen.filter((s) => s.topic === "file.progress" && s.progress === 0.45);
  expect(beats.length).toBeGreaterThanOrEqual(4);
  // Nothing after the end: the heartbeat stopped with the work.
  expect(seen.at(-1)?.topic).toBe("file.extracted");
});

it("hands a streamed file to its extractor as the blob store's stream, and closes it after", async () => {
  const blobs = new LocalBlobStore(join(dir, "streamed"));
  const bus = new InProcessBus(logger);
  const userId = randomUUID();
  const fileId = randomUUID();
  const bytes = Buffer.alloc(200_000, 7);
  await blobs.put(fileBlobKey(userId, fileId), Readable.from([bytes]));
  const seen: { read: number; stream: Readable }[] = [];
  const job = new ExtractionJob(
    { blobs, bus, logger, kindName: "recording" },
    async function* (data) {
      // Reads only the start, as an extractor that gives up early would.
      const first = (await data[Symbol.asyncIterator]().next()) as IteratorResult<Buffer>;
      seen.push({ read: first.value?.length ?? 0, stream: data });
      yield { content: "Heard.", locator: { timestamp: 0, timestamp_end: 1, source: "speech" } };
      return { pageCount: null, durationS: 1 };
    },
    streamedBlob,
  );
  await job.handle({
    topic: "file.uploaded.audio",
    message: { fileId, userId, kind: "audio", blobKey: fileBlobKey(userId, fileId), mimeType: "audio/wav" },
    attempt: 1,
    final: true,
  });
  await bus.close();
  expect(seen).toHaveLength(1);
  expect(seen[0]!.read).toBeGreaterThan(0);
  expect(seen[0]!.read).toBeLessThan(bytes.length);
  expect(seen[0]!.stream.destroyed).toBe(true);
});

it("ends the extraction when storing it fails midway: the extractor's decoder or thread is not left waiting", async () => {
  /** A store that takes the upload, then fails after the first line of an extraction. */
  class StoreFailingMidway extends LocalBlobStore {
    override async put(key: string, body: Readable): Promise<{ sizeBytes: number }> {
      if (!key.includes("extraction")) return super.put(key, body);
      for await (const _line of body) throw new Error("the storage went away");
      return { sizeBytes: 0 };
    }
  }
  const blobs = new StoreFailingMidway(join(dir, "failing"));
  const bus = new InProcessBus(logger);
  const userId = randomUUID();
  const fileId = randomUUID();
  await blobs.put(fileBlobKey(userId, fileId), Readable.from([Buffer.from("%PDF-1.7 ...")]));
  let ended = false;
  const job = new ExtractionJob({ blobs, bus, logger, kindName: "PDF" }, async function* () {
    try {
      for (let page = 1; ; page += 1) {
        await new Promise((resolve) => setImmediate(resolve)); // reading the page
        yield { content: `Page ${page}.`, locator: { page, line: 1, line_end: 1, source: "text" } };
      }
    } finally {
      ended = true; // where a real extractor stops its ffmpeg or gives its thread back
    }
  });
  await expect(
    job.handle({
      topic: "file.uploaded.pdf",
      message: {
        fileId,
        userId,
        kind: "pdf",
        blobKey: fileBlobKey(userId, fileId),
        mimeType: "application/pdf",
      },
      attempt: 1,
      final: false,
    }),
  ).rejects.toThrow("the storage went away");
  await bus.close();
  // The stream's close reaches the extraction a moment after the store's error reaches the job.
  expect(
    await pollUntil(
      () => ended,
      (value) => value,
    ),
  ).toBe(true);
});

it("tells its observer what each extracted file held, and fails a refused file with its stages so far", async () => {
  const blobs = new LocalBlobStore(join(dir, "observed"));
  const bus = new InProcessBus(logger);
  const failures: { code: string; stages?: FileStages | undefined }[] = [];
  await bus.subscribe(
    { group: "files-status", topics: ["file.failed"], concurrency: 1, maxAttempts: 1 },
    (delivery) => {
      if (delivery.topic === "file.failed")
        failures.push({ code: delivery.message.error.code, stages: delivery.message.stages });
      return Promise.resolve();
    },
  );
  const extracted: { kind: string; pageCount: number | null; durationS?: number }[] = [];
  const job = new ExtractionJob(
    {
      blobs,
      bus,
      logger,
      kindName: "recording",
      observer: { fileExtracted: (kind, summary) => extracted.push({ kind, ...summary }) },
    },
    async function* (data) {
      if (data.toString() === "damaged") {
        await new Promise((resolve) => setTimeout(resolve, 100));
        throw new FileRejectedError("media_corrupt", "The recording could not be decoded.");
      }
      yield { content: "Heard.", locator: { timestamp: 0, timestamp_end: 1, source: "speech" } };
      return { pageCount: null, durationS: 12.5 };
    },
  );
  const upload = async (content: string) => {
    const userId = randomUUID();
    const fileId = randomUUID();
    const blobKey = fileBlobKey(userId, fileId);
    await blobs.put(blobKey, Readable.from([Buffer.from(content)]));
    await job.handle({
      topic: "file.uploaded.audio",
      message: { fileId, userId, kind: "audio", blobKey, mimeType: "audio/wav" },
      attempt: 1,
      final: false,
      publishedAt: Date.now() - 1000,
    });
  };
  await upload("spoken");
  await upload("damaged");
  await bus.whenIdle();
  await bus.close();
  // Counted once, for the file that was extracted; the refused one is not.
  expect(extracted).toEqual([{ kind: "audio", pageCount: null, durationS: 12.5 }]);
  expect(failures).toHaveLength(1);
  expect(failures[0]?.code).toBe("media_corrupt");
  expect(failures[0]?.stages?.waited).toBeGreaterThanOrEqual(1);
  expect(failures[0]?.stages?.extraction).toBeGreaterThanOrEqual(0.1);
  expect(failures[0]?.stages?.extraction).toBeLessThan(60);
});
