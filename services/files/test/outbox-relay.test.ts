import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import type { MessageOf, Topic } from "@locus/contracts";
import { LocalBlobStore } from "@locus/blob-store";
import { InProcessBus, type Bus, type Delivery } from "@locus/bus";
import { createSqliteMetadataStore, type KyselyMetadataStore } from "@locus/metadata-store";
import { createLogger } from "@locus/runtime";
import { OutboxRelay, type OutboxRelayOptions } from "../src/outbox-relay.ts";
import { FilesService, PreviewTokens } from "../src/index.ts";

/**
 * Accepted means queued: an upload's processing request is stored with its file (the outbox) and
 * handed to the bus by a relay, so a files process that dies after storing the upload, or a bus
 * that refuses the message, delays processing by seconds (not until the stall sweep), and a
 * discarded upload is never processed. SQLite and the in-process bus; each test its own files.
 */
const logger = createLogger("test", "silent");
const HOLD_MS = 300;
const FAST: OutboxRelayOptions = { pollMs: 50, leaseMs: 200, batch: 50 };
let dir: string;
let store: KyselyMetadataStore;
let bus: InProcessBus;
const published: Delivery[] = [];
const relays: OutboxRelay[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "locus-outbox-"));
  store = createSqliteMetadataStore(join(dir, "metadata.sqlite"));
  await store.migrate();
  bus = new InProcessBus(logger);
  await bus.subscribe(
    { group: "extractor-pdf", topics: ["file.uploaded.pdf"], concurrency: 4, maxAttempts: 1 },
    (delivery) => {
      published.push(delivery);
      return Promise.resolve();
    },
  );
});

afterEach(async () => {
  await Promise.all(relays.splice(0).map((r) => r.stop()));
});

afterAll(async () => {
  await bus.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A files service as one process has it, with its relay (started: the process is up). */
function filesProcess(
  options: { relayOn?: Bus; failures?: string[]; start?: boolean; holdMs?: number } = {},
) {
  const relay = new OutboxRelay(
    store,
    options.relayOn ?? bus,
    logger,
    (topic) => options.failures?.push(topic),
    FAST,
  );
  relays.push(relay);
  const files = new FilesService(
    store,
    new LocalBlobStore(join(dir, "blobs")),
    bus,
    new PreviewTokens(randomBytes(32).toString("base64url")),
    {
      maxUploadBytes: 1 << 20,
      monthlyUploadQuota: { free: 100, pro: 0, enterprise: 0 },
      relay,
      uploadHoldMs: options.holdMs ?? HOLD_MS,
    },
    logger,
  );
  if (options.start !== false) relay.start();
  return { files, relay };
}

const pdf = () =>
  Readable.from([Buffer.from("%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\n" + " ".repeat(2000))]);
const newUser = () => store.createUser({ email: `${randomUUID()}@example.test`, plan: "free" });
const requestsFor = (fileId: string): MessageOf<Topic>[] =>
  published.filter((d) => d.message.fileId === fileId).map((d) => d.message);

async function until(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("the condition did not hold in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

it("publishes an announced upload's request at once, once, and keeps nothing of it", async () => {
  const { files, relay } = filesProcess();
  const user = await newUser();
  const before = await store.countOutboxEntries();
  const dto = await files.upload(user, { originalName: "a.pdf", body: pdf() });
  expect(await store.countOutboxEntries()).toBe(before + 1);
  await files.announceUpload(user, dto.id);
  await relay.idle();
  await bus.whenIdle();
  expect(requestsFor(dto.id)).toHaveLength(1);
  expect(await store.countOutboxEntries()).toBe(before);
});

it("holds an upload's request until its request completes: nothing is published before", async () => {
  // A hold no busy machine outlasts, watched over several of the relay's passes (50 ms each).
  const { files } = filesProcess({ holdMs: 60_000 });
  const user = await newUser();
  const dto = await files.upload(user, { originalName: "held.pdf", body: pdf() });
  await new Promise((resolve) => setTimeout(resolve, 6 * FAST.pollMs));
  await bus.whenIdle();
  expect(requestsFor(dto.id)).toEqual([]);
});

it("publishes the request of an upload whose files process died before announcing it, once its hold is over", async () => {
  // The first process stores the upload and dies (its relay never runs) before the request completes.
  const dying = filesProcess({ start: false });
  const user = await newUser();
  // Taken before the upload: the request is stored at this instant or after, so its hold ends no
  // sooner than HOLD_MS from here (taken after, a slow upload made the hold look short).
  const uploadStarted = Date.now();
  const dto = await dying.files.upload(user, { originalName: "orphan.pdf", body: pdf() });
  // Another (or the restarted) files process's relay finds it.
  filesProcess();
  await until(async () => {
    await bus.whenIdle();
    return requestsFor(dto.id).length > 0;
  });
  expect(Date.now() - uploadStarted).toBeGreaterThanOrEqual(HOLD_MS - 50);
  await new Promise((resolve) => setTimeout(resolve, FAST.leaseMs * 2));
  await bus.whenIdle();
  expect(requestsFor(dto.id)).toHaveLength(1);
});

it("never publishes the request of a discarded upload", async () => {
  const { files } = filesProcess();
  const user = await newUser();
  const dto = await files.upload(user, { originalName: "broken-off.pdf", body: pdf() });
  await files.discardUpload(user, dto.id);
  await new Promise((resolve) => setTimeout(resolve, HOLD_MS * 2));
  await bus.whenIdle();
  expect(requestsFor(dto.id)).toEqual([]);
});

it("keeps a request the bus refused, counts the failure, and publishes it at a later pass", async () => {
  let refusals = 1;
  const refusing: Bus = Object.create(bus) as Bus;
  refusing.publish = (topic, message, options) => {
    if (refusals-- > 0) return Promise.reject(new Error("the broker refused the message"));
    return bus.publish(topic, message, options);
  };
  const failures: string[] = [];
  const { files } = filesProcess({ relayOn: refusing, failures });
  const user = await newUser();
  const dto = await files.upload(user, { originalName: "refused.pdf", body: pdf() });
  await files.announceUpload(user, dto.id);
  await until(async () => {
    await bus.whenIdle();
    return requestsFor(dto.id).length > 0;
  });
  expect(failures).toEqual(["file.uploaded.pdf"]);
  expect(requestsFor(dto.id)).toHaveLength(1);
});

it("of two files processes' relays, one publishes each request", async () => {
  const a = filesProcess();
  filesProcess();
  const user = await newUser();
  const ids: string[] = [];
  for (let i = 0; i < 20; i++) {
    ids.push((await a.files.upload(user, { originalName: `many-${i}.pdf`, body: pdf() })).id);
  }
  // Never announced: both relays find them due at the end of their hold.
  await until(async () => {
    await bus.whenIdle();
    return ids.every((id) => requestsFor(id).length > 0);
  });
  await new Promise((resolve) => setTimeout(resolve, FAST.leaseMs * 2));
  await bus.whenIdle();
  expect(ids.map((id) => requestsFor(id).length)).toEqual(ids.map(() => 1));
});
