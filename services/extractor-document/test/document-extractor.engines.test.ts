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
  type MessageOf,
} from "@locus/contracts";
import { LocalBlobStore, readExtraction } from "@locus/blob-store";
import { InProcessBus } from "@locus/bus";
import { ExtractionPool } from "@locus/pdf-extraction";
import { OfficeConverter } from "@locus/office-converter";
import { createLogger } from "@locus/runtime";
import { makeTextDocument, pdfPageLines } from "@locus/testing";
import { documentExtractionJob, type MacroPolicy } from "../src/index.ts";

/**
 * The document extractor against real pieces: LibreOffice converting, the PDF reader's threads
 * reading the rendition, a blob directory and the in-process bus. What it stores (passages, and a
 * rendition for office documents only) and how it reports.
 */
const logger = createLogger("test", "silent");
let dir: string;
let blobs: LocalBlobStore;
let pool: ExtractionPool;
const converter = new OfficeConverter({ timeoutMs: 60_000, memoryMb: 4096 });

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "locus-document-extractor-"));
  blobs = new LocalBlobStore(join(dir, "blobs"));
  pool = new ExtractionPool({ threads: 1, pageTimeoutMs: 30_000, maxHeapMb: 512 });
});
afterAll(async () => {
  await pool.destroy();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs one extraction of `bytes` as an upload of `mimeType`; the messages it ended with. */
async function extract(bytes: Buffer, mimeType: string, macros: MacroPolicy = "refuse") {
  const bus = new InProcessBus(logger);
  const ended: (MessageOf<"file.extracted"> | MessageOf<"file.failed">)[] = [];
  await bus.subscribe(
    { group: "files-status", topics: ["file.extracted", "file.failed"], concurrency: 1, maxAttempts: 1 },
    (delivery) => {
      if (delivery.topic === "file.extracted" || delivery.topic === "file.failed")
        ended.push(delivery.message);
      return Promise.resolve();
    },
  );
  const userId = randomUUID();
  const fileId = randomUUID();
  await blobs.put(fileBlobKey(userId, fileId), Readable.from([bytes]));
  const job = documentExtractionJob(
    { blobs, bus, logger },
    { blobs, converter, pool, macros, maxTextBytes: 100_000 },
  );
  await job.handle({
    topic: "file.uploaded.document",
    message: { fileId, userId, kind: "document", blobKey: fileBlobKey(userId, fileId), mimeType },
    attempt: 1,
    final: true,
  });
  await bus.whenIdle();
  await bus.close();
  const passages: ExtractedPassage[] = [];
  if (ended[0] && "extractionKey" in ended[0]) {
    for await (const passage of readExtraction(blobs, extractionBlobKey(userId, fileId)))
      passages.push(passage);
  }
  return {
    ended: ended[0],
    passages,
    rendition: await blobs.stat(renditionBlobKey(userId, fileId)),
    userId,
    fileId,
  };
}

it("converts a DOCX, stores its PDF rendition, and locates passages on the rendition's pages and lines", async () => {
  const docx = await makeTextDocument("docx", [
    ["The first page speaks of tides."],
    ["Heading of page two", "Cormorants dry their wings on the pier."],
  ]);
  const { ended, passages, rendition, userId, fileId } = await extract(
    docx,
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  );
  expect(ended).toMatchObject({ pageCount: 2 });
  expect(rendition?.sizeBytes).toBeGreaterThan(0);
  const chunks: Buffer[] = [];
  for await (const chunk of await blobs.get(renditionBlobKey(userId, fileId))) chunks.push(chunk as Buffer);
  const lines = await pdfPageLines(Buffer.concat(chunks));
  const cormorants = passages.find((p) => p.content.includes("Cormorants dry"));
  expect(cormorants?.locator.page).toBe(2);
  const line = lines[1]!.findIndex((l) => l.includes("Cormorants dry")) + 1;
  expect(cormorants?.locator.line).toBeLessThanOrEqual(line);
  expect(cormorants?.locator.line_end).toBeGreaterThanOrEqual(line);
});

it("reads Markdown natively, with sections and no rendition", async () => {
  const { ended, passages, rendition } = await extract(
    Buffer.from("# Harbour\n\nBoats moor here.\n\n## Fees\n\nTen crowns a night.\n"),
    "text/markdown",
  );
  expect(ended).toMatchObject({ pageCount: null, passageCount: passages.length });
  expect(rendition).toBeNull();
  expect(passages.find((p) => p.content.includes("Ten crowns"))?.locator).toMatchObject({
    line: 3,
    line_end: 4,
    section: ["Harbour", "Fees"],
    source: "text",
  });
});

it("fails a text file past the size limit with text_too_large, and a damaged office file with its reason", async () => {
  const big = await extract(Buffer.alloc(200_000, "a"), "text/plain");
  expect(big.ended).toMatchObject({ error: { code: "text_too_large" } });
  const damaged = await extract(
    Buffer.concat([Buffer.from("PK\x03\x04"), Buffer.alloc(300, 1)]),
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  );
  expect(damaged.ended).toMatchObject({ error: { code: "document_corrupt" } });
  expect(damaged.rendition).toBeNull();
});
