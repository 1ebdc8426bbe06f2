import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { extractionBlobKey } from "@locus/contracts";
import { LocalBlobStore } from "@locus/blob-store";
import { InProcessBus } from "@locus/bus";
import { LocalEmbedder, loadWordVectors } from "@locus/embedder";
import { createSqliteMetadataStore, type KyselyMetadataStore } from "@locus/metadata-store";
import { createLogger } from "@locus/runtime";
import { SqliteSearchIndex, type IndexedPassage } from "@locus/search-index";
import { startIndexerModule } from "../src/index.ts";

/**
 * The second half of a delete: the files service removes the record and the bytes and publishes
 * file.deleted (services/files/test/files-service.test.ts); the indexer, subscribed on the bus as
 * the server subscribes it, removes the file's passages and extraction, and only that user's.
 */
const logger = createLogger("test", "silent");
let dir: string;
let store: KyselyMetadataStore;
let index: SqliteSearchIndex;
let blobs: LocalBlobStore;
let bus: InProcessBus;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "locus-indexer-deleted-"));
  store = createSqliteMetadataStore(join(dir, "metadata.sqlite"));
  await store.migrate();
  index = new SqliteSearchIndex(join(dir, "index.sqlite"));
  blobs = new LocalBlobStore(join(dir, "blobs"));
  bus = new InProcessBus(logger);
  await startIndexerModule({
    blobs,
    index,
    embedders: { local: new LocalEmbedder(await loadWordVectors()) },
    bus,
    logger,
    files: store,
    maxAttempts: 1,
  });
});

afterAll(async () => {
  await bus.close();
  await index.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A file's passages in the index and its extraction in the blob store, as indexing leaves them. */
async function indexed(userId: string, fileId: string, phrase: string) {
  async function* passages(): AsyncGenerator<IndexedPassage> {
    yield await Promise.resolve({ content: phrase, locator: { page: 1, line: 1, source: "text" as const } });
  }
  await index.replaceFilePassages({ userId, fileId }, passages());
  const line = `${JSON.stringify({ content: phrase, locator: { page: 1, line: 1, source: "text" } })}\n`;
  await blobs.put(extractionBlobKey(userId, fileId), Readable.from([line]));
}

const found = (userId: string, text: string) => index.search({ userId, text, limit: 10 });

it("file.deleted removes the file's passages and its extraction", async () => {
  const userId = randomUUID();
  const fileId = randomUUID();
  const kept = randomUUID();
  await indexed(userId, fileId, "Cormorants dry their wings on rocks.");
  await indexed(userId, kept, "Cormorants fish in shallow water.");

  await bus.publish("file.deleted", { fileId, userId });
  await bus.whenIdle();

  expect((await found(userId, "cormorants")).map((h) => h.fileId)).toEqual([kept]);
  expect(await blobs.stat(extractionBlobKey(userId, fileId))).toBeNull();
  expect(await blobs.stat(extractionBlobKey(userId, kept))).not.toBeNull();
  expect(bus.deadLetters).toEqual([]);
});

it("file.deleted naming another user leaves the owner's passages and extraction alone", async () => {
  const owner = randomUUID();
  const fileId = randomUUID();
  await indexed(owner, fileId, "Shearwaters return to their burrows at night.");

  await bus.publish("file.deleted", { fileId, userId: randomUUID() });
  await bus.whenIdle();

  expect((await found(owner, "shearwaters")).map((h) => h.fileId)).toEqual([fileId]);
  expect(await blobs.stat(extractionBlobKey(owner, fileId))).not.toBeNull();
});

it("file.deleted for a file with nothing indexed is done without error", async () => {
  await bus.publish("file.deleted", { fileId: randomUUID(), userId: randomUUID() });
  await bus.whenIdle();
  expect(bus.deadLetters).toEqual([]);
});
