import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { fileBlobKey, FileStatus } from "@locus/contracts";
import { LocalBlobStore } from "@locus/blob-store";
import { InProcessBus } from "@locus/bus";
import { createPostgresMetadataStore, type KyselyMetadataStore } from "@locus/metadata-store";
import { createLogger } from "@locus/runtime";
import { recordResilience } from "@locus/testing";
import { FilesService, PreviewTokens } from "../src/index.ts";

/**
 * The stall sweep as two files processes run it, on one real PostgreSQL: each stalled file is
 * published again by exactly one of them, and work that says it is alive is left alone.
 */
const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const schema = `locus_sweep_${randomBytes(4).toString("hex")}`;
const logger = createLogger("test", "silent");
let dir: string;
let stores: KyselyMetadataStore[];
let bus: InProcessBus;
let sweepers: FilesService[];
const published: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "locus-sweep-"));
  // Two processes: a connection pool each, one database.
  stores = [0, 1].map(() => createPostgresMetadataStore({ connectionString: DATABASE_URL, schema }));
  for (const store of stores) await store.migrate();
  bus = new InProcessBus(logger);
  await bus.subscribe(
    { group: "extractor-pdf", topics: ["file.uploaded.pdf"], concurrency: 8, maxAttempts: 1 },
    (delivery) => {
      published.push(delivery.message.fileId);
      return Promise.resolve();
    },
  );
  sweepers = stores.map(
    (store) =>
      new FilesService(
        store,
        new LocalBlobStore(join(dir, "blobs")),
        bus,
        new PreviewTokens(randomBytes(32).toString("base64url")),
        { maxUploadBytes: 1024, monthlyUploadQuota: { free: 0, pro: 0, enterprise: 0 } },
        logger,
      ),
  );
});

afterAll(async () => {
  await bus.close();
  for (const store of stores) await store.close();
  const db = new pg.Client({ connectionString: DATABASE_URL });
  await db.connect();
  await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await db.end();
  rmSync(dir, { recursive: true, force: true });
});

async function stalledFiles(count: number, updatedAt: string): Promise<string[]> {
  const user = await stores[0]!.createUser({ email: `${randomUUID()}@example.test`, plan: "pro" });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const id = randomUUID();
    ids.push(id);
    await stores[0]!.createFile({
      id,
      userId: user.id,
      originalName: `f${i}.pdf`,
      fileType: "pdf",
      mimeType: "application/pdf",
      sizeBytes: 10,
      blobKey: fileBlobKey(user.id, id),
      status: i % 2 ? "pending" : "processing",
      error: null,
      pageCount: null,
      durationS: null,
      passageCount: null,
      progress: null,
      metadata: {},
      createdAt: updatedAt,
      updatedAt,
    });
  }
  return ids;
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 300));
/**
 * Waits until `done` holds: for what must arrive, a poll with a generous deadline rather than a
 * fixed pause a busy CI could outlast.
 */
async function eventually(done: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

it("publishes each stalled file once, whichever of two files processes sweeps it", async () => {
  const ids = await stalledFiles(40, new Date(Date.now() - 3600_000).toISOString());
  // Both sweep at the same moment, several times over, as their timers would.
  const counts = await Promise.all([
    sweepers[0]!.recoverUnfinished(60_000),
    sweepers[1]!.recoverUnfinished(60_000),
    sweepers[0]!.recoverUnfinished(60_000),
    sweepers[1]!.recoverUnfinished(60_000),
  ]);
  await eventually(() => ids.every((id) => published.includes(id)), "every stalled file published");
  // Then a moment for any second publication (there must be none) to show.
  await settle();
  expect(counts.reduce((a, b) => a + b, 0)).toBe(40);
  const mine = published.filter((id) => ids.includes(id));
  expect(mine.sort()).toEqual([...ids].sort());
  recordResilience("audit-stall-sweep", {
    stalled_files: 40,
    sweepers: 2,
    sweeps: 4,
    published: mine.length,
  });
});

it("leaves alone work whose heartbeat keeps it fresh", async () => {
  const [alive] = await stalledFiles(1, new Date(Date.now() - 3600_000).toISOString());
  // What a heartbeat's file.progress does to the record.
  await stores[1]!.updateFile(
    alive!,
    { status: "processing", progress: 0.4 },
    { status: FileStatus.options },
  );
  expect(await sweepers[0]!.recoverUnfinished(60_000)).toBe(0);
  await settle();
  expect(published).not.toContain(alive);
});
