import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import {
  extractionBlobKey,
  fileBlobKey,
  renditionBlobKey,
  type ExtractedPassage,
  type FileStages,
} from "@locus/contracts";
import { LocalBlobStore } from "@locus/blob-store";
import { InProcessBus } from "@locus/bus";
import { LocalEmbedder, loadWordVectors, type Embedder } from "@locus/embedder";
import { createSqliteMetadataStore, type KyselyMetadataStore } from "@locus/metadata-store";
import { createLogger } from "@locus/runtime";
import { SqliteSearchIndex } from "@locus/search-index";
import { PassageIndexer } from "../src/index.ts";

/**
 * The indexer against real pieces (SQLite records and index, a blob directory, the in-process bus,
 * the offline word vectors): a file deleted while it was extracted or indexed gets no passages and
 * keeps no extraction, and nobody is told it is ready.
 */
const logger = createLogger("test", "silent");
let dir: string;
let store: KyselyMetadataStore;
let index: SqliteSearchIndex;
let blobs: LocalBlobStore;
let bus: InProcessBus;
let local: LocalEmbedder;
const indexed: string[] = [];
const stagesOf = new Map<string, FileStages | undefined>();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "locus-indexer-"));
  store = createSqliteMetadataStore(join(dir, "metadata.sqlite"));
  await store.migrate();
  index = new SqliteSearchIndex(join(dir, "index.sqlite"));
  blobs = new LocalBlobStore(join(dir, "blobs"));
  bus = new InProcessBus(logger);
  local = new LocalEmbedder(await loadWordVectors());
  await bus.subscribe(
    { group: "files-status", topics: ["file.indexed"], concurrency: 1, maxAttempts: 1 },
    (delivery) => {
      indexed.push(delivery.message.fileId);
      stagesOf.set(delivery.message.fileId, delivery.message.stages);
      return Promise.resolve();
    },
  );
});

afterAll(async () => {
  await bus.close();
  await index.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A user's file, recorded, with an extraction of `phrase` stored as the extractor leaves it. */
async function extractedFile(phrase: string) {
  const user = await store.createUser({ email: `${randomUUID()}@example.test`, plan: "pro" });
  const fileId = randomUUID();
  const now = new Date().toISOString();
  await store.createFile({
    id: fileId,
    userId: user.id,
    originalName: "notes.pdf",
    fileType: "pdf",
    mimeType: "application/pdf",
    sizeBytes: 100,
    blobKey: fileBlobKey(user.id, fileId),
    status: "processing",
    error: null,
    pageCount: null,
    durationS: null,
    passageCount: null,
    progress: null,
    metadata: {},
    createdAt: now,
    updatedAt: now,
  });
  const passages: ExtractedPassage[] = [
    { content: phrase, locator: { page: 1, line: 1, line_end: 1, source: "text" } },
  ];
  const extractionKey = extractionBlobKey(user.id, fileId);
  await blobs.put(extractionKey, Readable.from(passages.map((p) => `${JSON.stringify(p)}\n`)));
  const message = { fileId, userId: user.id, extractionKey, passageCount: 1, pageCount: 1 };
  const delivery = { topic: "file.extracted" as const, message, attempt: 1, final: true };
  return { userId: user.id, fileId, extractionKey, delivery };
}

const found = (userId: string, text: string) => index.search({ userId, text, limit: 10 });
/** The bus delivers on its own time: give "file.indexed" a moment to arrive (or not). */
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

/** What an indexer tells its observer: the passages it wrote, by file kind. */
const observed = () => {
  const written: { kind: string; count: number }[] = [];
  return {
    written,
    observer: { passagesIndexed: (kind: string, count: number) => written.push({ kind, count }) },
  };
};

it("indexes a file that still exists, and says it is ready, adding its stages to the extraction's", async () => {
  const file = await extractedFile("Gannets dive from thirty metres.");
  const { written, observer } = observed();
  const indexer = new PassageIndexer(blobs, index, { local }, bus, logger, store, undefined, observer);
  await indexer.handle({
    ...file.delivery,
    message: { ...file.delivery.message, stages: { waited: 1, extraction: 3 } },
    publishedAt: Date.now() - 1500,
  });
  expect(await found(file.userId, "gannets dive")).toHaveLength(1);
  await eventually(() => indexed.includes(file.fileId), "file.indexed");
  expect(indexed).toContain(file.fileId);
  const stages = stagesOf.get(file.fileId);
  expect(stages).toMatchObject({ waited: 1, extraction: 3 });
  expect(stages?.indexWaited).toBeGreaterThanOrEqual(1.5);
  expect(stages?.indexWaited).toBeLessThan(60);
  expect(stages?.indexing).toBeGreaterThanOrEqual(0);
  expect(written).toEqual([{ kind: "pdf", count: 1 }]);
});

it("does not index a file deleted while it was extracted, and removes its extraction and rendition", async () => {
  const file = await extractedFile("Kittiwakes nest on narrow ledges.");
  // An office document's extractor stores its PDF rendition after the delete already ran.
  const rendition = renditionBlobKey(file.userId, file.fileId);
  await blobs.put(rendition, Readable.from([Buffer.from("%PDF-1.7 rendition")]));
  await store.deleteFile(file.userId, file.fileId);
  const indexer = new PassageIndexer(blobs, index, { local }, bus, logger, store);
  await indexer.handle(file.delivery);
  expect(await found(file.userId, "kittiwakes ledges")).toEqual([]);
  expect(await blobs.stat(file.extractionKey)).toBeNull();
  expect(await blobs.stat(rendition)).toBeNull();
  await settle();
  expect(indexed).not.toContain(file.fileId);
});

it("removes what it wrote for a file deleted while it was indexed", async () => {
  const file = await extractedFile("Puffins carry fish crosswise.");
  // The delete lands while the passages are being embedded (another process served it).
  const deletingMidway: Embedder = {
    name: local.name,
    space: local.space,
    dimensions: local.dimensions,
    matching: local.matching,
    embed: async (texts) => {
      await store.deleteFile(file.userId, file.fileId);
      return local.embed(texts);
    },
  };
  const { written, observer } = observed();
  const indexer = new PassageIndexer(
    blobs,
    index,
    { local: deletingMidway },
    bus,
    logger,
    store,
    undefined,
    observer,
  );
  await indexer.handle(file.delivery);
  expect(await found(file.userId, "puffins fish")).toEqual([]);
  expect(await blobs.stat(file.extractionKey)).toBeNull();
  await settle();
  expect(indexed).not.toContain(file.fileId);
  // Its passages were removed again: not counted as indexed.
  expect(written).toEqual([]);
});

it("with the meaning stage, writes passages for keyword search alone and says the file is ready", async () => {
  const file = await extractedFile("Shearwaters skim the wave tops.");
  // No offline engine: the encoder group adds the vectors once the file is ready.
  const indexer = new PassageIndexer(blobs, index, {}, bus, logger, store);
  await indexer.handle(file.delivery);
  expect(await found(file.userId, "shearwaters")).toHaveLength(1);
  await eventually(() => indexed.includes(file.fileId), "file.indexed");
  const lacking = await index.passagesWithoutVector({
    file: { userId: file.userId, fileId: file.fileId },
    slot: "local",
    space: local.space,
    limit: 10,
  });
  expect(lacking).toEqual([{ ord: 0, content: "Shearwaters skim the wave tops." }]);
});
