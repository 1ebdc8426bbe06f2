import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtractedPassage } from "@locus/contracts";
import { InProcessBus } from "@locus/bus";
import { SentenceEncoder } from "@locus/embedder";
import { createLogger } from "@locus/runtime";
import { SqliteSearchIndex, type FileRef } from "@locus/search-index";
import { PassageEncoder, startEncoderModule } from "../src/index.ts";

/**
 * The meaning stage against real pieces: the sentence encoder (the model `pnpm install` fetched),
 * a SQLite index and the in-process bus. Passages indexed by keyword alone get their vectors, a
 * page at a time, once each; what the stage reads and what it stores never cross files or users.
 */
const logger = createLogger("test", "silent");
let dir: string;
let index: SqliteSearchIndex;
let encoder: SentenceEncoder;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "locus-encoder-"));
  index = new SqliteSearchIndex(join(dir, "index.sqlite"));
  encoder = await SentenceEncoder.load();
});

afterAll(async () => {
  await encoder.close();
  await index.close();
  rmSync(dir, { recursive: true, force: true });
});

const STATEMENTS = [
  "The lighthouse keeper trimmed the lamp's wick every evening at dusk.",
  "Bread dough must rest in a warm place until it doubles in size.",
  "Glaciers carve U-shaped valleys as they slowly flow downhill.",
  "",
  "A violin's sound comes from the bow's friction on its strings.",
  "Tax returns are due at the end of April in many countries.",
];

const line = (content: string, i: number): ExtractedPassage => ({
  content,
  locator: { page: 1, line: i + 1, line_end: i + 1, source: "text" },
});

/** A file of the statements, indexed for keyword search only (as the indexer does with the stage). */
async function indexedByKeyword(texts: readonly string[] = STATEMENTS): Promise<FileRef> {
  const file = { userId: randomUUID(), fileId: randomUUID() };
  async function* passages() {
    for (const [i, text] of texts.entries()) yield await Promise.resolve(line(text, i));
  }
  await index.replaceFilePassages(file, passages());
  return file;
}

const lacking = (file: FileRef) =>
  index.passagesWithoutVector({ file, slot: "local", space: encoder.space, limit: 100 });

async function nearest(file: FileRef, question: string) {
  const [vector] = await encoder.embed([question]);
  return index.vectorSearch({
    userId: file.userId,
    slot: "local",
    space: encoder.space,
    vector: vector!,
    limit: 1,
  });
}

it("gives every passage with text its vector, a page at a time, and the questions find them", async () => {
  const file = await indexedByKeyword();
  const counted: number[] = [];
  const stage = new PassageEncoder(index, encoder, { passagesEncoded: (_engine, n) => counted.push(n) }, 2);
  expect(await stage.encodeFile(file)).toBe(5);
  // Pages of two: the empty passage gets no vector, so its page stores one.
  expect(counted).toEqual([2, 1, 2]);
  // Only the empty passage is left without a vector.
  expect(await lacking(file)).toEqual([{ ord: 3, content: "" }]);
  expect((await nearest(file, "When must I file my taxes?"))[0]?.ord).toBe(5);
  expect((await nearest(file, "How do rivers of ice shape mountains?"))[0]?.ord).toBe(2);
});

it("encodes only what is left when a file comes again (a redelivery), and nothing of other files", async () => {
  const done = await indexedByKeyword();
  const other = await indexedByKeyword(STATEMENTS.slice(0, 2));
  const stage = new PassageEncoder(index, encoder);
  expect(await stage.encodeFile(done)).toBe(5);
  expect(await stage.encodeFile(done)).toBe(0);
  expect(await lacking(other)).toHaveLength(2);
  // Another user naming the same file id reads and writes nothing of it.
  expect(await stage.encodeFile({ userId: randomUUID(), fileId: other.fileId })).toBe(0);
  expect(await lacking(other)).toHaveLength(2);
});

it("stops between pages once its signal is aborted (a stop), keeping what it stored; the next run encodes the rest", async () => {
  const file = await indexedByKeyword();
  const stopping = new AbortController();
  const stage = new PassageEncoder(
    index,
    encoder,
    { passagesEncoded: () => stopping.abort(new Error("stopping")) },
    2,
  );
  await expect(stage.encodeFile(file, stopping.signal)).rejects.toThrow("stopping");
  // The first page of two was stored before the stop; the rest (but the empty passage) is left.
  expect(await lacking(file)).toHaveLength(4);
  expect(await new PassageEncoder(index, encoder, undefined, 2).encodeFile(file)).toBe(3);
  expect(await lacking(file)).toEqual([{ ord: 3, content: "" }]);
});

it("stores nothing for a file deleted before its turn", async () => {
  const file = await indexedByKeyword();
  await index.deleteFilePassages(file);
  expect(await new PassageEncoder(index, encoder).encodeFile(file)).toBe(0);
  expect(await nearest(file, "When must I file my taxes?")).toEqual([]);
});

it("encodes each file the bus reports indexed, in the encoder group, and reports it encoded", async () => {
  const bus = new InProcessBus(logger);
  const encoded: string[] = [];
  const reported: unknown[] = [];
  try {
    await bus.subscribe(
      { group: "files-status", topics: ["file.encoded"], concurrency: 1, maxAttempts: 1 },
      (delivery) => {
        reported.push(delivery.message);
        return Promise.resolve();
      },
    );
    await startEncoderModule({
      index,
      embedder: encoder,
      bus,
      logger,
      maxAttempts: 2,
      observer: { passagesEncoded: (engine, n) => encoded.push(`${engine}: ${n}`) },
    });
    const file = await indexedByKeyword();
    await bus.publish("file.indexed", { ...file, passageCount: STATEMENTS.length, pageCount: 1 });
    for (let i = 0; i < 100 && encoded.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(encoded).toEqual([`${encoder.name}: 5`]);
    expect(await lacking(file)).toEqual([{ ord: 3, content: "" }]);
    await bus.whenIdle();
    expect(reported).toEqual([{ ...file, encoded: 5 }]);
  } finally {
    await bus.close();
  }
});
