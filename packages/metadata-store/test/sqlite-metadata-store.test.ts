import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FileStatus } from "@locus/contracts";
import { createSqliteMetadataStore } from "../src/sqlite-metadata-store.ts";
import type { MetadataStore } from "../src/metadata-store.ts";
import { metadataStoreContract } from "./metadata-store.contract.ts";

metadataStoreContract("SQLite", async () => {
  const dir = await mkdtemp(join(tmpdir(), "locus-metadata-"));
  const store = createSqliteMetadataStore(join(dir, "locus.db"));
  return {
    store,
    async cleanup() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

describe("SQLite metadata store on one file shared by two processes' stores", () => {
  let dir: string;
  let path: string;
  let server: MetadataStore;
  let cli: MetadataStore;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "locus-metadata-shared-"));
    // A nested path that does not exist yet: the store creates its directory.
    path = join(dir, "data", "nested", "locus.db");
    server = createSqliteMetadataStore(path);
    cli = createSqliteMetadataStore(path);
    await server.migrate();
    await cli.migrate();
  });

  afterEach(async () => {
    await server.close();
    await cli.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("migrating twice from both stores is harmless and keeps the data", async () => {
    const user = await server.createUser({ email: "keep@example.test", plan: "free" });
    await server.migrate();
    await cli.migrate();
    await expect(server.check()).resolves.toBeUndefined();
    await expect(cli.check()).resolves.toBeUndefined();
    expect(await cli.findUserByEmail("keep@example.test")).toEqual(user);
  });

  it("a fresh store over an existing file migrates and sees the existing data", async () => {
    const user = await server.createUser({ email: "reopen@example.test", plan: "pro" });
    const reopened = createSqliteMetadataStore(path);
    try {
      await reopened.migrate();
      expect(await reopened.findUserById(user.id)).toEqual(user);
    } finally {
      await reopened.close();
    }
  });

  it("each store sees the other's writes: a key the CLI creates authenticates at the server", async () => {
    const user = await server.createUser({ email: "op@example.test", plan: "pro" });
    expect(await cli.findUserByEmail("op@example.test")).toEqual(user);

    const key = await cli.createKey({
      userId: user.id,
      name: "from the CLI",
      type: "live",
      displayPrefix: "lk_live_cli1",
      hash: "cli-hash",
    });
    expect((await server.findActiveKeyByHash("cli-hash"))?.key).toEqual(key);

    await server.touchKey(key.id, "2025-07-01T00:00:00.000Z");
    expect((await cli.listKeys(user.id))[0]?.lastUsedAt).toBe("2025-07-01T00:00:00.000Z");

    // Revoked by the CLI: the server refuses it on the next request.
    expect(await cli.revokeKey({ hash: "cli-hash" })).not.toBeNull();
    expect(await server.findActiveKeyByHash("cli-hash")).toBeNull();
  });

  it("offers no key-change feed: the CLI's writes to the file could not be told, so nothing may be kept", () => {
    const listener = { changed: () => undefined, live: () => undefined, lost: () => undefined };
    expect(server.watchKeyChanges(listener)).toBeNull();
  });

  it("file records written by one store are read by the other", async () => {
    const user = await server.createUser({ email: "files@example.test", plan: "free" });
    const id = randomUUID();
    await server.createFile({
      id,
      userId: user.id,
      originalName: "a.pdf",
      fileType: "pdf",
      mimeType: "application/pdf",
      sizeBytes: 10,
      blobKey: `files/${user.id}/${id}`,
      status: "pending",
      error: null,
      pageCount: null,
      durationS: null,
      passageCount: null,
      progress: null,
      metadata: {},
      createdAt: "2025-01-01T00:00:00.000Z",
      updatedAt: "2025-01-01T00:00:00.000Z",
    });
    await cli.updateFile(
      id,
      {
        status: "ready",
        pageCount: 1,
        durationS: null,
        passageCount: 2,
        progress: 1,
      },
      { status: FileStatus.options },
    );
    expect(await server.getFile(user.id, id)).toMatchObject({
      status: "ready",
      pageCount: 1,
      durationS: null,
      passageCount: 2,
    });
    expect(await cli.deleteFile(user.id, id)).not.toBeNull();
    expect(await server.getFileById(id)).toBeNull();
  });

  it("quota reservations through both stores never exceed the quota together", async () => {
    const user = await server.createUser({ email: "quota@example.test", plan: "free" });
    const month = "2025-08";
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? server : cli).reserveUpload(user.id, month, 9)),
    );
    expect(results.filter(Boolean)).toHaveLength(9);
    expect(await server.uploadsThisMonth(user.id, month)).toBe(9);
    expect(await cli.uploadsThisMonth(user.id, month)).toBe(9);
  });
});

describe("SQLite metadata store in memory", () => {
  it("works on :memory: without creating any directory", async () => {
    const store = createSqliteMetadataStore(":memory:");
    try {
      await store.migrate();
      const user = await store.createUser({ email: "mem@example.test", plan: "free" });
      expect(await store.findUserById(user.id)).toEqual(user);
    } finally {
      await store.close();
    }
  });
});
