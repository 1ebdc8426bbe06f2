import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import {
  extractionBlobKey,
  fileBlobKey,
  FileStatus,
  LocusError,
  positionCursor,
  type Topic,
} from "@locus/contracts";
import { LocalBlobStore } from "@locus/blob-store";
import { InProcessBus, type Delivery } from "@locus/bus";
import { createSqliteMetadataStore, type KyselyMetadataStore, type User } from "@locus/metadata-store";
import { createLogger } from "@locus/runtime";
import { OutboxRelay } from "../src/outbox-relay.ts";
import { FilesService, PreviewTokens } from "../src/index.ts";

/**
 * The files service against real pieces (a SQLite metadata file, a blob directory, the in-process
 * bus): what an upload stores and what a refused or broken one leaves behind (nothing), delete,
 * paging, and that one user's files are "not found" to everyone else.
 */
const logger = createLogger("test", "silent");
const MAX_UPLOAD_BYTES = 64 * 1024;
const FREE_QUOTA = 2;
let dir: string;
let blobRoot: string;
let store: KyselyMetadataStore;
let blobs: LocalBlobStore;
let bus: InProcessBus;
let files: FilesService;
let relay: OutboxRelay;
const published: Delivery[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "locus-files-service-"));
  store = createSqliteMetadataStore(join(dir, "metadata.sqlite"));
  await store.migrate();
  blobRoot = join(dir, "blobs");
  blobs = new LocalBlobStore(blobRoot);
  bus = new InProcessBus(logger);
  const record = (delivery: Delivery) => {
    published.push(delivery);
    return Promise.resolve();
  };
  // What the extractors and the indexer would receive.
  await bus.subscribe(
    { group: "extractor-pdf", topics: ["file.uploaded.pdf"], concurrency: 1, maxAttempts: 1 },
    record,
  );
  await bus.subscribe({ group: "indexer", topics: ["file.deleted"], concurrency: 1, maxAttempts: 1 }, record);
  relay = new OutboxRelay(store, bus, logger);
  files = new FilesService(
    store,
    blobs,
    bus,
    new PreviewTokens(randomBytes(32).toString("base64url")),
    {
      maxUploadBytes: MAX_UPLOAD_BYTES,
      monthlyUploadQuota: { free: FREE_QUOTA, pro: 0, enterprise: 0 },
      relay,
    },
    logger,
  );
});

afterAll(async () => {
  await relay.stop();
  await bus.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Bytes file-type recognises as a PDF, `size` long. */
function pdfBytes(size = 6000): Buffer {
  const head = Buffer.from("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n", "latin1");
  return Buffer.concat([head, Buffer.alloc(Math.max(0, size - head.length), 0x20)]);
}

const body = (bytes: Buffer) => Readable.from([bytes]);
const newUser = (plan: User["plan"] = "pro") =>
  store.createUser({ email: `${randomUUID()}@example.test`, plan });
const month = () => new Date().toISOString().slice(0, 7);

/** Every blob under the store's root (relative paths), the temporary directory included. */
function storedBlobs(): string[] {
  try {
    return readdirSync(blobRoot, { recursive: true, encoding: "utf8" }).filter((p) =>
      statSync(join(blobRoot, p)).isFile(),
    );
  } catch {
    return [];
  }
}
const blobsOf = (userId: string) => storedBlobs().filter((p) => p.includes(userId));

/** What `promise` rejected with, as a LocusError (fails the test when it resolved or threw something else). */
async function locusError(promise: Promise<unknown>): Promise<LocusError> {
  const err = await promise.then(
    () => new Error("expected a rejection"),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(LocusError);
  return err as LocusError;
}

const messagesFor = (fileId: string, topic: Topic) =>
  published.filter((d) => d.topic === topic && d.message.fileId === fileId).map((d) => d.message);

describe("upload", () => {
  it("stores the bytes under the file's key, records it pending and counts it against the month", async () => {
    const user = await newUser();
    const bytes = pdfBytes();
    const dto = await files.upload(user, { originalName: "report.pdf", body: body(bytes) });

    expect(dto).toMatchObject({
      original_name: "report.pdf",
      status: "pending",
      file_type: "pdf",
      mime_type: "application/pdf",
      size_bytes: bytes.length,
      error: null,
      passage_count: null,
    });
    expect(readFileSync(join(blobRoot, fileBlobKey(user.id, dto.id)))).toEqual(bytes);
    const record = await store.getFile(user.id, dto.id);
    expect(record).toMatchObject({ status: "pending", blobKey: fileBlobKey(user.id, dto.id) });
    expect(await store.uploadsThisMonth(user.id, month())).toBe(1);
    // The DTO is what clients see: no storage details.
    expect(dto).not.toHaveProperty("blobKey");
    expect(dto).not.toHaveProperty("userId");
  });

  it("asks for processing only when the upload is announced, and only once", async () => {
    const user = await newUser();
    const dto = await files.upload(user, { originalName: "a.pdf", body: body(pdfBytes()) });
    await bus.whenIdle();
    expect(messagesFor(dto.id, "file.uploaded.pdf")).toEqual([]);

    await files.announceUpload(user, dto.id);
    await relay.idle();
    await bus.whenIdle();
    expect(messagesFor(dto.id, "file.uploaded.pdf")).toEqual([
      {
        fileId: dto.id,
        userId: user.id,
        kind: "pdf",
        blobKey: fileBlobKey(user.id, dto.id),
        mimeType: "application/pdf",
      },
    ]);

    // Already moving (an extractor reported progress): announcing again publishes nothing.
    await store.updateFile(dto.id, { status: "processing", progress: 0.1 }, { status: FileStatus.options });
    await files.announceUpload(user, dto.id);
    await relay.idle();
    await bus.whenIdle();
    expect(messagesFor(dto.id, "file.uploaded.pdf")).toHaveLength(1);
  });

  it("takes control characters and direction overrides out of the name", async () => {
    const user = await newUser();
    const dto = await files.upload(user, {
      originalName: " invoice\u202efdp.exe\u0007 ",
      body: body(pdfBytes()),
    });
    expect(dto.original_name).toBe("invoicefdp.exe");
  });

  it("refuses an upload over the monthly quota with quota_exceeded and Retry-After, storing nothing", async () => {
    const user = await newUser("free");
    for (let i = 0; i < FREE_QUOTA; i++) {
      await files.upload(user, { originalName: `ok-${i}.pdf`, body: body(pdfBytes()) });
    }
    const blobsBefore = blobsOf(user.id);

    const err = await locusError(
      files.upload(user, { originalName: "one-too-many.pdf", body: body(pdfBytes()) }),
    );
    expect(err.code).toBe("quota_exceeded");
    expect(err.status).toBe(429);
    expect(err.message).toContain(`monthly quota of ${FREE_QUOTA} uploads`);
    const retryAfter = Number(err.headers["Retry-After"]);
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(31 * 24 * 3600);

    const listed = await files.list(user.id, { limit: 10 });
    expect(listed.files.map((f) => f.original_name).sort()).toEqual(["ok-0.pdf", "ok-1.pdf"]);
    expect(blobsOf(user.id)).toEqual(blobsBefore);
    expect(await store.uploadsThisMonth(user.id, month())).toBe(FREE_QUOTA);
  });

  it("refuses a file over the size limit with payload_too_large, leaving no blob, record or use of quota", async () => {
    const user = await newUser("free");
    const err = await locusError(
      files.upload(user, { originalName: "big.pdf", body: body(pdfBytes(MAX_UPLOAD_BYTES + 1)) }),
    );
    expect(err.code).toBe("payload_too_large");
    expect(err.status).toBe(413);
    expect((await files.list(user.id, { limit: 10 })).files).toEqual([]);
    expect(blobsOf(user.id)).toEqual([]);
    expect(storedBlobs().filter((p) => p.startsWith(".tmp"))).toEqual([]);
    expect(await store.uploadsThisMonth(user.id, month())).toBe(0);
  });

  it("accepts a file of exactly the size limit", async () => {
    const user = await newUser();
    const dto = await files.upload(user, {
      originalName: "edge.pdf",
      body: body(pdfBytes(MAX_UPLOAD_BYTES)),
    });
    expect(dto.size_bytes).toBe(MAX_UPLOAD_BYTES);
  });

  it("refuses a kind it cannot extract with unsupported_media_type, and gives the quota back", async () => {
    const user = await newUser("free");
    const err = await locusError(
      files.upload(user, {
        originalName: "notes.pdf",
        body: body(Buffer.from([0, 0x13, 0x37, 0, 0xde, 0xad])),
      }),
    );
    expect(err.code).toBe("unsupported_media_type");
    expect(err.message).toContain("recognised from the file's content, not its name");
    expect(blobsOf(user.id)).toEqual([]);
    expect(await store.uploadsThisMonth(user.id, month())).toBe(0);
  });

  it("refuses an empty file and a nameless one with bad_request, and gives the quota back", async () => {
    const user = await newUser("free");
    const empty = await locusError(
      files.upload(user, { originalName: "empty.pdf", body: body(Buffer.alloc(0)) }),
    );
    expect(empty.code).toBe("bad_request");
    expect(empty.message).toBe("The uploaded file is empty.");
    const nameless = await locusError(
      files.upload(user, { originalName: "\u200e \u0000", body: body(pdfBytes()) }),
    );
    expect(nameless.code).toBe("bad_request");
    expect(nameless.message).toContain("no name");
    expect(blobsOf(user.id)).toEqual([]);
    expect(await store.uploadsThisMonth(user.id, month())).toBe(0);
  });

  it("leaves no blob, record or use of quota when the upload breaks off midway", async () => {
    const user = await newUser("free");
    const broken = Readable.from(
      (async function* () {
        yield pdfBytes(5000);
        await new Promise((resolve) => setTimeout(resolve, 10));
        throw new Error("client went away");
      })(),
    );
    await expect(files.upload(user, { originalName: "cut.pdf", body: broken })).rejects.toThrow(
      "client went away",
    );
    expect((await files.list(user.id, { limit: 10 })).files).toEqual([]);
    expect(blobsOf(user.id)).toEqual([]);
    expect(storedBlobs().filter((p) => p.startsWith(".tmp"))).toEqual([]);
    expect(await store.uploadsThisMonth(user.id, month())).toBe(0);
  });

  it("removes the stored blob and gives the quota back when the record cannot be written", async () => {
    const user = await newUser("free");
    // The database refuses the record (as a full disk or a lost connection would): the same store,
    // but for its createFile. (A trigger added through a second SQLite connection did this at first,
    // and did not always take effect when suites ran side by side.)
    const refusing: KyselyMetadataStore = Object.create(store);
    refusing.createFile = () => Promise.reject(new Error("database or disk is full"));
    const refusingFiles = new FilesService(
      refusing,
      blobs,
      bus,
      new PreviewTokens(randomBytes(32).toString("base64url")),
      { maxUploadBytes: MAX_UPLOAD_BYTES, monthlyUploadQuota: { free: FREE_QUOTA, pro: 0, enterprise: 0 } },
      logger,
    );
    await expect(
      refusingFiles.upload(user, { originalName: "unrecorded.pdf", body: body(pdfBytes()) }),
    ).rejects.toThrow("database or disk is full");
    expect((await files.list(user.id, { limit: 10 })).files).toEqual([]);
    expect(blobsOf(user.id)).toEqual([]);
    expect(await store.uploadsThisMonth(user.id, month())).toBe(0);
  });

  it("discarding an upload removes it like a delete and gives its quota back", async () => {
    const user = await newUser("free");
    const dto = await files.upload(user, { originalName: "discarded.pdf", body: body(pdfBytes()) });
    expect(await store.uploadsThisMonth(user.id, month())).toBe(1);
    await files.discardUpload(user, dto.id);
    expect(await store.getFile(user.id, dto.id)).toBeNull();
    expect(blobsOf(user.id)).toEqual([]);
    expect(await store.uploadsThisMonth(user.id, month())).toBe(0);
  });
});

describe("delete", () => {
  it("removes the record, the bytes and the extraction, and publishes file.deleted for the passages", async () => {
    const user = await newUser();
    const dto = await files.upload(user, { originalName: "gone.pdf", body: body(pdfBytes()) });
    const extraction = extractionBlobKey(user.id, dto.id);
    await blobs.put(extraction, Readable.from(['{"content":"x","locator":{"source":"text"}}\n']));

    await files.delete(user.id, dto.id);
    await bus.whenIdle();

    expect(await store.getFile(user.id, dto.id)).toBeNull();
    expect(await blobs.stat(fileBlobKey(user.id, dto.id))).toBeNull();
    expect(await blobs.stat(extraction)).toBeNull();
    expect(messagesFor(dto.id, "file.deleted")).toEqual([{ fileId: dto.id, userId: user.id }]);
    // Deleting does not give the month's upload back.
    expect(await store.uploadsThisMonth(user.id, month())).toBe(1);
  });

  it("is not_found the second time, and publishes nothing more", async () => {
    const user = await newUser();
    const dto = await files.upload(user, { originalName: "twice.pdf", body: body(pdfBytes()) });
    await files.delete(user.id, dto.id);
    const err = await locusError(files.delete(user.id, dto.id));
    expect(err.code).toBe("not_found");
    await bus.whenIdle();
    expect(messagesFor(dto.id, "file.deleted")).toHaveLength(1);
  });
});

describe("another user's file", () => {
  it("is not found by get, delete, passages or preview, and is left intact", async () => {
    const owner = await newUser();
    const other = await newUser();
    const dto = await files.upload(owner, { originalName: "private.pdf", body: body(pdfBytes()) });
    await store.updateFile(dto.id, { status: "ready" }, { status: FileStatus.options });

    for (const attempt of [
      () => files.get(other.id, dto.id),
      () => files.delete(other.id, dto.id),
      () => files.passages(other.id, dto.id, { offset: 0, limit: 10 }),
      () => files.previewLink(other.id, dto.id, "http://locus.test", { keyId: randomUUID() }),
      () => files.announceUpload(other, dto.id),
      () => files.discardUpload(other, dto.id),
    ]) {
      const err = await locusError(attempt());
      expect(err.code).toBe("not_found");
      expect(err.message).toBe("File not found");
    }
    expect((await files.list(other.id, { limit: 100 })).files).toEqual([]);

    await bus.whenIdle();
    expect(messagesFor(dto.id, "file.deleted")).toEqual([]);
    expect(messagesFor(dto.id, "file.uploaded.pdf")).toEqual([]);
    expect((await files.get(owner.id, dto.id)).status).toBe("ready");
    expect(await blobs.stat(fileBlobKey(owner.id, dto.id))).not.toBeNull();
  });

  it("a file id that never existed is not found too, the same way", async () => {
    const user = await newUser();
    const err = await locusError(files.get(user.id, randomUUID()));
    expect(err.code).toBe("not_found");
    expect(err.message).toBe("File not found");
  });
});

describe("list", () => {
  it("pages through the user's own files newest first, each once, ending with a null cursor", async () => {
    const user = await newUser();
    const neighbour = await newUser();
    await files.upload(neighbour, { originalName: "neighbour.pdf", body: body(pdfBytes()) });
    const uploaded: string[] = [];
    for (let i = 0; i < 5; i++) {
      uploaded.push((await files.upload(user, { originalName: `f${i}.pdf`, body: body(pdfBytes()) })).id);
      // Distinct timestamps, so "newest first" has one answer.
      await new Promise((resolve) => setTimeout(resolve, 3));
    }

    const seen: string[] = [];
    const pageSizes: number[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await files.list(user.id, { limit: 2, cursor });
      pageSizes.push(page.files.length);
      seen.push(...page.files.map((f) => f.id));
      if (page.nextCursor === null) break;
      cursor = page.nextCursor;
    }
    expect(pageSizes).toEqual([2, 2, 1]);
    expect(seen).toEqual([...uploaded].reverse());
  });

  it("ends with a null cursor when the last page is exactly full", async () => {
    const user = await newUser();
    for (let i = 0; i < 2; i++)
      await files.upload(user, { originalName: `f${i}.pdf`, body: body(pdfBytes()) });
    const page = await files.list(user.id, { limit: 2 });
    expect(page.files).toHaveLength(2);
    expect(page.nextCursor).toBeNull();
  });

  it("keeps files uploaded in the same millisecond apart by id", async () => {
    const user = await newUser();
    const at = new Date().toISOString();
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of ids) {
      await store.createFile({
        id,
        userId: user.id,
        originalName: `${id}.pdf`,
        fileType: "pdf",
        mimeType: "application/pdf",
        sizeBytes: 10,
        blobKey: fileBlobKey(user.id, id),
        status: "ready",
        error: null,
        pageCount: null,
        durationS: null,
        passageCount: null,
        progress: null,
        metadata: {},
        createdAt: at,
        updatedAt: at,
      });
    }
    const first = await files.list(user.id, { limit: 1 });
    const rest = await files.list(user.id, { limit: 10, cursor: first.nextCursor ?? undefined });
    const seen = [...first.files, ...rest.files].map((f) => f.id);
    expect(seen).toEqual([...ids].sort().reverse());
  });

  it("never reads a cursor it did not make as the first page (a client would loop): it finds nothing", async () => {
    const user = await newUser();
    await files.upload(user, { originalName: "only.pdf", body: body(pdfBytes()) });
    const page = await files.list(user.id, { limit: 10, cursor: "not-a-cursor" });
    expect(page).toEqual({ files: [], nextCursor: null });
  });
});

describe("passages", () => {
  const lines = ["Gannets dive.", "Kittiwakes nest.", "Puffins carry fish."];

  async function readyFileWithExtraction() {
    const user = await newUser();
    const dto = await files.upload(user, { originalName: "birds.pdf", body: body(pdfBytes()) });
    const extraction = lines.map(
      (content, i) =>
        `${JSON.stringify({ content, locator: { page: 1, line: i + 1, source: "text", line_joins: [] } })}\n`,
    );
    await blobs.put(extractionBlobKey(user.id, dto.id), Readable.from(extraction));
    return { user, dto };
  }

  it("are refused with conflict until the file is ready", async () => {
    const { user, dto } = await readyFileWithExtraction();
    const err = await locusError(files.passages(user.id, dto.id, { offset: 0, limit: 10 }));
    expect(err.code).toBe("conflict");
    expect(err.message).toContain("pending");
  });

  it("are read a page at a time in order, with the next offset, and without stored-only locator keys", async () => {
    const { user, dto } = await readyFileWithExtraction();
    await store.updateFile(dto.id, { status: "ready" }, { status: FileStatus.options });
    const first = await files.passages(user.id, dto.id, { offset: 0, limit: 2 });
    expect(first).toEqual({
      passages: [
        { content: lines[0], locator: { page: 1, line: 1, source: "text" } },
        { content: lines[1], locator: { page: 1, line: 2, source: "text" } },
      ],
      next_offset: 2,
      next_cursor: positionCursor(2),
    });
    const second = await files.passages(user.id, dto.id, { offset: 2, limit: 2 });
    expect(second).toEqual({
      passages: [{ content: lines[2], locator: { page: 1, line: 3, source: "text" } }],
      next_offset: null,
      next_cursor: null,
    });
  });
});

describe("recovery of the meaning stage's work (a bus whose messages die with the process)", () => {
  beforeAll(async () => {
    // What the meaning stage (the encoder group) would receive.
    await bus.subscribe(
      { group: "encoder", topics: ["file.indexed"], concurrency: 1, maxAttempts: 1 },
      (delivery) => {
        published.push(delivery);
        return Promise.resolve();
      },
    );
  });

  /** A file record of `user`'s in `status`, its passages' vectors in `aiVectors` when given. */
  async function fileOf(user: User, status: FileStatus, aiVectors?: "pending" | "ready") {
    const id = randomUUID();
    const at = new Date().toISOString();
    await store.createFile({
      id,
      userId: user.id,
      originalName: "manual.pdf",
      fileType: "pdf",
      mimeType: "application/pdf",
      sizeBytes: 100,
      blobKey: `${user.id}/${id}`,
      status,
      error: null,
      pageCount: status === "ready" ? 3 : null,
      durationS: null,
      passageCount: status === "ready" ? 7 : null,
      progress: null,
      metadata: {},
      createdAt: at,
      updatedAt: at,
    });
    if (aiVectors) expect(await store.updateFile(id, { aiVectors }, { status: ["ready"] })).not.toBeNull();
    return id;
  }

  it("announces again each ready file whose vectors are pending, and no other", async () => {
    const [a, b] = [await newUser(), await newUser()];
    const waiting = [await fileOf(a, "ready", "pending"), await fileOf(b, "ready", "pending")];
    const others = [
      await fileOf(a, "ready", "ready"),
      await fileOf(a, "ready"),
      await fileOf(b, "processing"),
      await fileOf(b, "failed"),
    ];
    published.length = 0;
    expect(await files.recoverPendingVectors()).toBe(2);
    await bus.whenIdle();
    const announced = published.filter((d) => d.topic === "file.indexed").map((d) => d.message);
    expect(announced).toEqual(
      expect.arrayContaining([
        {
          fileId: waiting[0],
          userId: a.id,
          passageCount: 7,
          pageCount: 3,
          durationS: null,
          vectorsLater: true,
        },
        {
          fileId: waiting[1],
          userId: b.id,
          passageCount: 7,
          pageCount: 3,
          durationS: null,
          vectorsLater: true,
        },
      ]),
    );
    expect(announced).toHaveLength(2);
    for (const id of others) expect(messagesFor(id, "file.indexed")).toEqual([]);
  });
});
