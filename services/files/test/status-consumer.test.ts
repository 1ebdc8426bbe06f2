import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileBlobKey, type FileStages, type FileStatus, type MessageOf, type Topic } from "@locus/contracts";
import { InProcessBus } from "@locus/bus";
import { createSqliteMetadataStore, type FileRecord, type KyselyMetadataStore } from "@locus/metadata-store";
import { createLogger } from "@locus/runtime";
import { subscribeStatusUpdates } from "../src/status-consumer.ts";

/**
 * The status consumer on the in-process bus over a SQLite store: what each pipeline report does
 * to a file's record, that reports about files that are gone (or someone else's) change nothing
 * and fail nothing, and which reports arriving late or twice cannot take a file back.
 */
const logger = createLogger("test", "silent");
let dir: string;
let store: KyselyMetadataStore;
let bus: InProcessBus;
const deleted: MessageOf<"file.deleted">[] = [];
// What the consumer reports to metrics: each file's finish, with its kind, outcome and seconds.
const finished: { fileId?: string; kind: string; outcome: string; seconds: number }[] = [];
const stagesTaken: { kind: string; stages: FileStages }[] = [];
// The consumer's warnings (its "file failed" lines), fields and message.
const warnings: { fields: Record<string, unknown>; message: string | undefined }[] = [];
// Reports that changed nothing, as counted for metrics.
const ignored: { topic: string; reason: string }[] = [];
const consumerLogger = createLogger("test", "silent");
consumerLogger.warn = (fields: Record<string, unknown>, message?: string) => {
  warnings.push({ fields, message });
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "locus-status-"));
  store = createSqliteMetadataStore(join(dir, "metadata.sqlite"));
  await store.migrate();
  // A short retry base, so a handler that failed would show up as a retry quickly.
  bus = new InProcessBus(logger, 5);
  await subscribeStatusUpdates(bus, store, consumerLogger, {
    uploadAccepted: () => undefined,
    fileFinished: (kind, outcome, seconds) => finished.push({ kind, outcome, seconds }),
    stagesTook: (kind, stages) => stagesTaken.push({ kind, stages }),
    reportIgnored: (topic, reason) => ignored.push({ topic, reason }),
    publishFailed: () => undefined,
  });
  // The indexer's queue: what the consumer asks it to clean up.
  await bus.subscribe({ group: "indexer", topics: ["file.deleted"], concurrency: 1, maxAttempts: 1 }, (d) => {
    deleted.push(d.message);
    return Promise.resolve();
  });
});

afterAll(async () => {
  await bus.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

afterEach(() => {
  // No report may make the consumer throw (it would be retried, then dead-lettered).
  expect(bus.deadLetters).toEqual([]);
});

async function fileWithStatus(status: FileStatus) {
  const user = await store.createUser({ email: `${randomUUID()}@example.test`, plan: "pro" });
  const id = randomUUID();
  const at = new Date(Date.now() - 60_000).toISOString();
  await store.createFile({
    id,
    userId: user.id,
    originalName: "notes.pdf",
    fileType: "pdf",
    mimeType: "application/pdf",
    sizeBytes: 100,
    blobKey: fileBlobKey(user.id, id),
    status,
    error: null,
    pageCount: null,
    durationS: null,
    passageCount: null,
    progress: null,
    metadata: {},
    createdAt: at,
    updatedAt: at,
  });
  return { fileId: id, userId: user.id };
}

/** Publishes the reports in order, one delivered before the next is sent, and waits for them all. */
async function report(...messages: { topic: Topic; message: MessageOf<Topic> }[]): Promise<void> {
  for (const { topic, message } of messages) {
    await bus.publish(topic, message);
    await bus.whenIdle();
  }
}

type Ref = { fileId: string; userId: string };
const progress = (ref: Ref, value: number) => ({
  topic: "file.progress" as const,
  message: { ...ref, progress: value },
});
const indexed = (ref: Ref, passageCount = 12, pageCount: number | null = 3, durationS?: number) => ({
  topic: "file.indexed" as const,
  message: { ...ref, passageCount, pageCount, ...(durationS === undefined ? {} : { durationS }) },
});
const failed = (ref: Ref, code: string, message: string) => ({
  topic: "file.failed" as const,
  message: { ...ref, error: { code, message } },
});

const recordOf = async (ref: Ref): Promise<FileRecord> => {
  const record = await store.getFile(ref.userId, ref.fileId);
  if (!record) throw new Error("the file's record is gone");
  return record;
};

it("reports each file's finish once, with its kind, outcome and the seconds since its upload", async () => {
  finished.length = 0;
  const ready = await fileWithStatus("processing");
  const broken = await fileWithStatus("processing");
  // Twice each, as a redelivery would: counted once.
  await report(indexed(ready), indexed(ready));
  await report(failed(broken, "pdf_corrupt", "The PDF is damaged."), failed(broken, "pdf_corrupt", "Again."));
  expect(finished.map(({ kind, outcome }) => ({ kind, outcome }))).toEqual([
    { kind: "pdf", outcome: "ready" },
    { kind: "pdf", outcome: "pdf_corrupt" },
  ]);
  // Stages are reported only as the pipeline gave them (none here).
  expect(stagesTaken).toEqual([]);
  // The records were made a minute ago (fileWithStatus).
  for (const { seconds } of finished) expect(seconds).toBeGreaterThanOrEqual(59);
  for (const { seconds } of finished) expect(seconds).toBeLessThan(600);
});

it("reports the stages a ready file's report carries, once", async () => {
  stagesTaken.length = 0;
  const file = await fileWithStatus("processing");
  const stages = { waited: 0.5, extraction: 2.25, indexWaited: 0.01, indexing: 0.3 };
  const report1 = {
    topic: "file.indexed" as const,
    message: { ...file, passageCount: 2, pageCount: 1, stages },
  };
  await report(report1, report1);
  expect(stagesTaken).toEqual([{ kind: "pdf", stages }]);
});

it("says in the file failed line each stage its report knows, and only its total when it knows none", async () => {
  const rejected = await fileWithStatus("processing");
  const givenUp = await fileWithStatus("processing");
  const stages = { waited: 0.25, extraction: 1.5 };
  const stagesReported = stagesTaken.length;
  await report(
    {
      topic: "file.failed" as const,
      message: { ...rejected, error: { code: "pdf_encrypted", message: "Protected." }, stages },
    },
    failed(givenUp, "indexing_failed", "Locus could not index this file's text."),
  );
  const lineOf = (fileId: string) =>
    warnings.find((w) => w.message === "file failed" && w.fields.fileId === fileId)?.fields;
  expect(lineOf(rejected.fileId)).toMatchObject({ code: "pdf_encrypted", stages });
  expect(lineOf(rejected.fileId)?.totalS).toBeGreaterThanOrEqual(59);
  expect(lineOf(givenUp.fileId)).toMatchObject({ code: "indexing_failed" });
  expect(lineOf(givenUp.fileId)?.stages).toBeUndefined();
  // A failed file's stages go to the log only: the stage histograms are of files that became ready.
  expect(stagesTaken.length).toBe(stagesReported);
});

it("file.progress moves a pending file to processing with its progress", async () => {
  const file = await fileWithStatus("pending");
  await report(progress(file, 0.25));
  expect(await recordOf(file)).toMatchObject({ status: "processing", progress: 0.25, error: null });
  await report(progress(file, 0.5));
  expect(await recordOf(file)).toMatchObject({ status: "processing", progress: 0.5 });
});

it("file.indexed makes the file ready with its counts, progress 1 and no error", async () => {
  const file = await fileWithStatus("processing");
  const before = await recordOf(file);
  await report(indexed(file, 42, 7));
  const after = await recordOf(file);
  expect(after).toMatchObject({
    status: "ready",
    progress: 1,
    error: null,
    passageCount: 42,
    pageCount: 7,
    durationS: null,
  });
  expect(after.updatedAt > before.updatedAt).toBe(true);
});

it("file.indexed of a recording keeps its duration", async () => {
  const file = await fileWithStatus("processing");
  await report(indexed(file, 5, null, 93.5));
  expect(await recordOf(file)).toMatchObject({ status: "ready", pageCount: null, durationS: 93.5 });
});

it("file.failed marks the file failed with the code and the reason, and clears its progress", async () => {
  const file = await fileWithStatus("processing");
  await report(progress(file, 0.4), failed(file, "pdf_encrypted", "The PDF is protected by a password."));
  expect(await recordOf(file)).toMatchObject({
    status: "failed",
    progress: null,
    error: { code: "pdf_encrypted", message: "The PDF is protected by a password." },
  });
});

it("a file indexed after an operator reopened its failure (retry, replay) is ready, its old error gone", async () => {
  const file = await fileWithStatus("processing");
  await report(failed(file, "indexing_failed", "Locus could not index this file's text."));
  await store.updateFile(file.fileId, { status: "pending", error: null }, { status: ["failed"] });
  await report(indexed(file));
  expect(await recordOf(file)).toMatchObject({ status: "ready", error: null, progress: 1 });
});

describe("reports arriving late or twice", () => {
  it("a late progress report does not take a ready file back to processing", async () => {
    const file = await fileWithStatus("processing");
    await report(indexed(file, 12, 3));
    const ready = await recordOf(file);
    await report(progress(file, 0.9));
    expect(await recordOf(file)).toEqual(ready);
  });

  it("a late progress report does not take a failed file back to processing", async () => {
    const file = await fileWithStatus("processing");
    await report(failed(file, "pdf_corrupt", "The PDF could not be read."));
    const failedRecord = await recordOf(file);
    await report(progress(file, 0.5));
    expect(await recordOf(file)).toEqual(failedRecord);
  });

  it("a late failure does not take a ready file to failed, nor a late success a failed file to ready", async () => {
    ignored.length = 0;
    const ready = await fileWithStatus("processing");
    await report(indexed(ready, 12, 3));
    const readyRecord = await recordOf(ready);
    await report(failed(ready, "extraction_failed", "A second worker gave up."));
    expect(await recordOf(ready)).toEqual(readyRecord);

    const broken = await fileWithStatus("processing");
    await report(failed(broken, "pdf_corrupt", "The PDF could not be read."));
    const failedRecord = await recordOf(broken);
    await report(indexed(broken, 5, 1));
    expect(await recordOf(broken)).toEqual(failedRecord);
    expect(ignored).toEqual([
      { topic: "file.failed", reason: "stale" },
      { topic: "file.indexed", reason: "stale" },
    ]);
  });

  it("progress never goes back, but a report behind it still says the work is alive", async () => {
    ignored.length = 0;
    const file = await fileWithStatus("pending");
    await report(progress(file, 0.6));
    const at = (await recordOf(file)).updatedAt;
    await new Promise((resolve) => setTimeout(resolve, 5));
    // A retried attempt starts again from 0, and its heartbeats say so.
    await report(progress(file, 0.3));
    const after = await recordOf(file);
    expect(after).toMatchObject({ status: "processing", progress: 0.6 });
    expect(after.updatedAt > at).toBe(true);
    expect(ignored).toEqual([]);
    // About a finished file, it is stale.
    await report(indexed(file), progress(file, 0.9));
    expect(ignored).toEqual([{ topic: "file.progress", reason: "stale" }]);
  });

  it("reports handled at once, in any order, leave the file ready: never processing after ready", async () => {
    // The group handles four reports at once: a progress report read before the success was
    // recorded must not be written after it (#35: the file went back to processing, progress 0).
    for (let round = 0; round < 20; round += 1) {
      const file = await fileWithStatus("pending");
      const reports = [progress(file, 0), progress(file, 0.5), indexed(file, 7, 2), progress(file, 0.9)];
      if (round % 2 === 1) reports.reverse();
      await Promise.all(reports.map((r) => bus.publish(r.topic, r.message)));
      await bus.whenIdle();
      expect(await recordOf(file)).toMatchObject({ status: "ready", progress: 1, passageCount: 7 });
    }
  });

  it("file.indexed delivered twice leaves the file ready with the same counts", async () => {
    ignored.length = 0;
    const file = await fileWithStatus("processing");
    await report(indexed(file, 12, 3), indexed(file, 12, 3));
    expect(ignored).toEqual([{ topic: "file.indexed", reason: "duplicate" }]);
    expect(await recordOf(file)).toMatchObject({
      status: "ready",
      passageCount: 12,
      pageCount: 3,
      progress: 1,
    });
  });

  it("file.failed delivered twice leaves the file failed with the same error", async () => {
    const file = await fileWithStatus("processing");
    const report1 = failed(file, "ocr_timeout", "Reading the image took too long.");
    await report(report1, report1);
    expect(await recordOf(file)).toMatchObject({
      status: "failed",
      error: { code: "ocr_timeout", message: "Reading the image took too long." },
    });
  });
});

describe("reports about files that are gone or not the sender's", () => {
  it("file.indexed for a deleted file asks the indexer to remove its passages", async () => {
    const file = await fileWithStatus("processing");
    await store.deleteFile(file.userId, file.fileId);
    await report(indexed(file));
    expect(deleted).toContainEqual({ fileId: file.fileId, userId: file.userId });
    expect(await store.getFileById(file.fileId)).toBeNull();
  });

  it("file.progress and file.failed for an unknown file are dropped without error or cleanup", async () => {
    const ghost = { fileId: randomUUID(), userId: randomUUID() };
    await report(progress(ghost, 0.3), failed(ghost, "media_corrupt", "The recording could not be decoded."));
    expect(await store.getFileById(ghost.fileId)).toBeNull();
    expect(deleted.filter((d) => d.fileId === ghost.fileId)).toEqual([]);
  });

  it("reports naming the right file but another user change nothing", async () => {
    const file = await fileWithStatus("processing");
    const before = await recordOf(file);
    const stranger = { fileId: file.fileId, userId: randomUUID() };
    await report(
      progress(stranger, 0.7),
      failed(stranger, "extraction_failed", "nope"),
      indexed(stranger, 99, 99),
    );
    expect(await recordOf(file)).toEqual(before);
    // The stranger's "indexed" is answered as for a deleted file: cleanup scoped to the stranger.
    expect(deleted.filter((d) => d.fileId === file.fileId)).toEqual([stranger]);
  });
});

const indexedForKeywords = (ref: Ref) => ({
  topic: "file.indexed" as const,
  message: { ...ref, passageCount: 4, pageCount: 1, vectorsLater: true },
});
const encoded = (ref: Ref, count = 4) => ({
  topic: "file.encoded" as const,
  message: { ...ref, encoded: count },
});

it("says a file's passages are pending for ai search until the meaning stage has encoded them", async () => {
  ignored.length = 0;
  const staged = await fileWithStatus("processing");
  await report(indexedForKeywords(staged));
  expect(await recordOf(staged)).toMatchObject({ status: "ready", aiVectors: "pending" });
  await report(encoded(staged));
  expect(await recordOf(staged)).toMatchObject({ status: "ready", aiVectors: "ready" });
  // The same report again (a redelivery) changes nothing.
  await report(encoded(staged));
  expect(ignored).toEqual([{ topic: "file.encoded", reason: "duplicate" }]);

  // Indexed with its vectors: nothing to wait for, and a stray report does not say otherwise.
  const inline = await fileWithStatus("processing");
  await report(indexed(inline));
  expect((await recordOf(inline)).aiVectors).toBeUndefined();
  await report(encoded(inline));
  expect((await recordOf(inline)).aiVectors).toBeUndefined();
  expect(ignored.at(-1)).toEqual({ topic: "file.encoded", reason: "stale" });
});

it("applies an encoding report that overtook its file's indexed report, once the file is ready", async () => {
  const staged = await fileWithStatus("processing");
  // Published together: the encoding report may be handled first, before the file is ready.
  await Promise.all([
    bus.publish("file.encoded", encoded(staged).message),
    bus.publish("file.indexed", indexedForKeywords(staged).message),
  ]);
  await bus.whenIdle();
  expect(await recordOf(staged)).toMatchObject({ status: "ready", aiVectors: "ready" });
});
