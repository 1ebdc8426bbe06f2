import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileBlobKey, type FileEvent, type FileStatus } from "@locus/contracts";
import { InProcessBus, type Bus, type Delivery } from "@locus/bus";
import { createSqliteMetadataStore, type KyselyMetadataStore } from "@locus/metadata-store";
import { createLogger } from "@locus/runtime";
import { fileEventId } from "../src/file-events.ts";
import { subscribeStatusUpdates } from "../src/status-consumer.ts";

/**
 * The files service tells webhooks what it recorded (`file.event`), on the in-process bus over a
 * SQLite store: once per change, and again under the same id when the report that made the change
 * is redelivered because publishing the event failed.
 */
const logger = createLogger("test", "silent");
let dir: string;
let store: KyselyMetadataStore;
let bus: InProcessBus;
const events: FileEvent[] = [];
/** file.event publications to refuse (the broker was away), and the ids they carried. */
let refuseEvents = 0;
const refusedIds: string[] = [];
/** The status consumer's handler, to hand it deliveries only a broker makes (a crash's redelivery). */
let statusHandler: (delivery: Delivery) => Promise<void>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "locus-file-events-"));
  store = createSqliteMetadataStore(join(dir, "metadata.sqlite"));
  await store.migrate();
  bus = new InProcessBus(logger, 5);
  const flaky: Bus = {
    publish: (topic, message, options) => {
      if (topic === "file.event" && refuseEvents > 0) {
        refuseEvents -= 1;
        refusedIds.push((message as FileEvent).id);
        return Promise.reject(new Error("the broker is away"));
      }
      return bus.publish(topic, message, options);
    },
    subscribe: (options, handler) => {
      if (options.group === "files-status") statusHandler = handler as (delivery: Delivery) => Promise<void>;
      return bus.subscribe(options, handler);
    },
    check: () => bus.check(),
    queueDepth: (group) => bus.queueDepth(group),
    close: () => bus.close(),
  };
  await subscribeStatusUpdates(flaky, store, logger);
  await bus.subscribe({ group: "webhooks", topics: ["file.event"], concurrency: 1, maxAttempts: 1 }, (d) => {
    events.push(d.message);
    return Promise.resolve();
  });
});

afterAll(async () => {
  await bus.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  events.length = 0;
  refusedIds.length = 0;
});

async function fileWithStatus(status: FileStatus) {
  const user = await store.createUser({ email: `${randomUUID()}@example.test`, plan: "pro" });
  const id = randomUUID();
  const at = new Date().toISOString();
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

async function indexed(ref: { fileId: string; userId: string }) {
  await bus.publish("file.indexed", { ...ref, passageCount: 4, pageCount: 1 });
  await bus.whenIdle();
}

describe("file events for webhooks", () => {
  it("a file that becomes ready is announced once, with its record as it now is", async () => {
    const ref = await fileWithStatus("processing");
    await indexed(ref);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: "file.ready",
      ...ref,
      file: { id: ref.fileId, status: "ready", passage_count: 4, page_count: 1 },
    });
    // Another report of the same outcome (not a redelivery) announces nothing more.
    await indexed(ref);
    expect(events).toHaveLength(1);
  });

  it("a failed file is announced as file.failed with its error", async () => {
    const ref = await fileWithStatus("processing");
    await bus.publish("file.failed", {
      ...ref,
      error: { code: "pdf_corrupt", message: "The PDF is damaged." },
    });
    await bus.whenIdle();
    expect(events).toMatchObject([
      { type: "file.failed", file: { status: "failed", error: { code: "pdf_corrupt" } } },
    ]);
  });

  it("when the event cannot be published, the report's redelivery publishes it under the same id", async () => {
    const ref = await fileWithStatus("processing");
    refuseEvents = 1;
    await indexed(ref);
    expect(refusedIds).toHaveLength(1);
    expect(events).toHaveLength(1);
    expect(events[0]?.id).toBe(refusedIds[0]);
    expect((await store.getFileById(ref.fileId))?.status).toBe("ready");
  });

  it("a report redelivered after its worker stopped announces the recorded change again, under the same id", async () => {
    const ref = await fileWithStatus("processing");
    const report: Delivery = {
      topic: "file.indexed",
      message: { ...ref, passageCount: 4, pageCount: 1 },
      attempt: 1,
      final: false,
      publishedAt: 1_700_000_000_000,
    };
    // The first delivery records the change and publishes; then, as if its process had died before
    // acknowledging, the broker delivers it again (attempt 1: the handler never reported a failure).
    await statusHandler(report);
    await statusHandler({ ...report, redelivered: true });
    await bus.whenIdle();
    expect(events.map((e) => e.type)).toEqual(["file.ready", "file.ready"]);
    expect(events[1]?.id).toBe(events[0]?.id);
    // A second report of the same outcome, delivered for the first time, is not announced again.
    await statusHandler({ ...report, publishedAt: 1_700_000_001_000 });
    await bus.whenIdle();
    expect(events).toHaveLength(2);
  });

  it("event ids are UUIDs that depend on the file, the type and the cause only", () => {
    const id = fileEventId("f1", "file.ready", "123");
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(fileEventId("f1", "file.ready", "123")).toBe(id);
    expect(fileEventId("f1", "file.ready", "124")).not.toBe(id);
    expect(fileEventId("f1", "file.failed", "123")).not.toBe(id);
    expect(fileEventId("f2", "file.ready", "123")).not.toBe(id);
  });
});
