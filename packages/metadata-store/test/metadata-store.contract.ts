import { randomUUID } from "node:crypto";
import { FileStatus } from "@locus/contracts";
import type { FileRecord, MetadataStore, User } from "../src/metadata-store.ts";

export interface MetadataStoreHarness {
  store: MetadataStore;
  cleanup(): Promise<void>;
}

/**
 * The behaviour every MetadataStore adapter promises (see the JSDoc in src/metadata-store.ts).
 * `make` returns a store over an empty database; the suite calls `migrate()` itself. Each test
 * gets its own store, so adapters over a shared server should give each call a fresh schema.
 */
export function metadataStoreContract(name: string, make: () => Promise<MetadataStoreHarness>): void {
  describe(`MetadataStore contract: ${name}`, () => {
    let harness: MetadataStoreHarness;
    let store: MetadataStore;

    beforeEach(async () => {
      harness = await make();
      store = harness.store;
      await store.migrate();
    });

    afterEach(async () => {
      await harness.cleanup();
    });

    const newUser = (plan: User["plan"] = "free") =>
      store.createUser({ email: `${randomUUID()}@example.test`, plan });

    let hashCounter = 0;
    const newKey = (userId: string, name = "key") =>
      store.createKey({
        userId,
        name,
        type: "live",
        displayPrefix: "lk_live_ab12",
        hash: `hash-${++hashCounter}-${randomUUID()}`,
      });

    const fileFor = (userId: string, overrides: Partial<FileRecord> = {}): FileRecord => {
      const id = randomUUID();
      return {
        id,
        userId,
        originalName: "report.pdf",
        fileType: "pdf",
        mimeType: "application/pdf",
        sizeBytes: 123_456,
        blobKey: `files/${userId}/${id}`,
        status: "pending",
        error: null,
        pageCount: null,
        durationS: null,
        passageCount: null,
        progress: null,
        metadata: {},
        createdAt: "2025-03-01T10:00:00.000Z",
        updatedAt: "2025-03-01T10:00:00.000Z",
        ...overrides,
      };
    };

    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

    describe("schema and health", () => {
      it("migrate() can be called again on an up-to-date schema", async () => {
        await store.migrate();
        await expect(store.check()).resolves.toBeUndefined();
        expect(await newUser()).toMatchObject({ plan: "free" });
      });
    });

    describe("users", () => {
      it("creates a user with an id, the given email and plan, and an ISO creation time", async () => {
        const user = await store.createUser({ email: "ada@example.test", plan: "pro" });
        expect(user.id).toEqual(expect.any(String));
        expect(user.id.length).toBeGreaterThan(0);
        expect(user.email).toBe("ada@example.test");
        expect(user.plan).toBe("pro");
        expect(new Date(user.createdAt).toISOString()).toBe(user.createdAt);
      });

      it("finds a user by email and by id", async () => {
        const user = await store.createUser({ email: "grace@example.test", plan: "enterprise" });
        await newUser();
        expect(await store.findUserByEmail("grace@example.test")).toEqual(user);
        expect(await store.findUserById(user.id)).toEqual(user);
      });

      it("returns null for an unknown email or id", async () => {
        await newUser();
        expect(await store.findUserByEmail("nobody@example.test")).toBeNull();
        expect(await store.findUserById(randomUUID())).toBeNull();
      });

      it("refuses a second user with the same email", async () => {
        await store.createUser({ email: "same@example.test", plan: "free" });
        // Drivers' errors are not always recognisable Error instances across jest's module realms
        // (better-sqlite3's SqliteError is not), so check for an error-shaped rejection instead.
        await expect(store.createUser({ email: "same@example.test", plan: "pro" })).rejects.toHaveProperty(
          "message",
        );
        expect((await store.findUserByEmail("same@example.test"))?.plan).toBe("free");
      });
    });

    describe("API keys", () => {
      it("creates a key that is found, with its owner, by its hash", async () => {
        const user = await newUser("pro");
        const key = await store.createKey({
          userId: user.id,
          name: "ci",
          type: "test",
          displayPrefix: "lk_test_9f3a",
          hash: "the-hash",
        });
        expect(key).toMatchObject({
          userId: user.id,
          name: "ci",
          type: "test",
          displayPrefix: "lk_test_9f3a",
          lastUsedAt: null,
          revokedAt: null,
        });
        expect(new Date(key.createdAt).toISOString()).toBe(key.createdAt);

        const found = await store.findActiveKeyByHash("the-hash");
        expect(found).toEqual({ key, user });
      });

      it("never exposes the hash on a key", async () => {
        const user = await newUser();
        const key = await newKey(user.id);
        expect(key).not.toHaveProperty("hash");
        const [listed] = await store.listKeys(user.id);
        expect(listed).not.toHaveProperty("hash");
      });

      it("returns null for an unknown hash", async () => {
        const user = await newUser();
        await newKey(user.id);
        expect(await store.findActiveKeyByHash("no-such-hash")).toBeNull();
      });

      it("revokes by id: the key is no longer found and is listed as revoked", async () => {
        const user = await newUser();
        const key = await store.createKey({
          userId: user.id,
          name: "k",
          type: "live",
          displayPrefix: "lk_live_0000",
          hash: "hash-by-id",
        });
        const revoked = await store.revokeKey({ id: key.id });
        expect(revoked).toMatchObject({ id: key.id, userId: user.id, name: "k" });
        expect(revoked?.revokedAt).toEqual(expect.any(String));
        expect(await store.findActiveKeyByHash("hash-by-id")).toBeNull();
        const [listed] = await store.listKeys(user.id);
        expect(listed?.id).toBe(key.id);
        expect(listed?.revokedAt).toBe(revoked?.revokedAt);
      });

      it("revokes by hash", async () => {
        const user = await newUser();
        const key = await store.createKey({
          userId: user.id,
          name: "k",
          type: "live",
          displayPrefix: "lk_live_0000",
          hash: "hash-by-hash",
        });
        const revoked = await store.revokeKey({ hash: "hash-by-hash" });
        expect(revoked?.id).toBe(key.id);
        expect(revoked?.revokedAt).not.toBeNull();
        expect(await store.findActiveKeyByHash("hash-by-hash")).toBeNull();
      });

      it("revoking an already revoked key returns null and keeps the first revocation time", async () => {
        const user = await newUser();
        const key = await newKey(user.id);
        const first = await store.revokeKey({ id: key.id });
        await sleep(5);
        expect(await store.revokeKey({ id: key.id })).toBeNull();
        const [listed] = await store.listKeys(user.id);
        expect(listed?.revokedAt).toBe(first?.revokedAt);
      });

      it("revoking an unknown key returns null", async () => {
        expect(await store.revokeKey({ id: randomUUID() })).toBeNull();
        expect(await store.revokeKey({ hash: "unknown" })).toBeNull();
      });

      it("revoking one key leaves the user's other keys active", async () => {
        const user = await newUser();
        const keep = await store.createKey({
          userId: user.id,
          name: "keep",
          type: "live",
          displayPrefix: "lk_live_keep",
          hash: "keep-hash",
        });
        const drop = await newKey(user.id, "drop");
        await store.revokeKey({ id: drop.id });
        expect((await store.findActiveKeyByHash("keep-hash"))?.key.id).toBe(keep.id);
      });

      it("lists a user's keys newest first, and only that user's", async () => {
        const user = await newUser();
        const other = await newUser();
        const first = await newKey(user.id, "first");
        await sleep(5);
        await newKey(other.id, "other");
        const second = await newKey(user.id, "second");
        await sleep(5);
        const third = await newKey(user.id, "third");
        const keys = await store.listKeys(user.id);
        expect(keys.map((k) => k.id)).toEqual([third.id, second.id, first.id]);
        expect(await store.listKeys(randomUUID())).toEqual([]);
      });

      it("touchKey records when the key was last used", async () => {
        const user = await newUser();
        const key = await store.createKey({
          userId: user.id,
          name: "k",
          type: "live",
          displayPrefix: "lk_live_0000",
          hash: "touch-hash",
        });
        const at = "2025-06-01T12:34:56.000Z";
        await store.touchKey(key.id, at);
        expect((await store.findActiveKeyByHash("touch-hash"))?.key.lastUsedAt).toBe(at);
        expect((await store.listKeys(user.id))[0]?.lastUsedAt).toBe(at);
        const later = "2025-06-02T00:00:00.000Z";
        await store.touchKey(key.id, later);
        expect((await store.findActiveKeyByHash("touch-hash"))?.key.lastUsedAt).toBe(later);
      });

      it("renameKey renames only the owner's key, and keeps everything else about it", async () => {
        const user = await newUser();
        const other = await newUser();
        const key = await newKey(user.id, "old name");
        expect(await store.renameKey({ id: key.id, userId: other.id, name: "taken" })).toBeNull();
        expect(await store.renameKey({ id: randomUUID(), userId: user.id, name: "x" })).toBeNull();
        const renamed = await store.renameKey({ id: key.id, userId: user.id, name: "new name" });
        expect(renamed).toEqual({ ...key, name: "new name" });
        expect(await store.listKeys(user.id)).toEqual([{ ...key, name: "new name" }]);
      });
    });

    describe("dashboard accounts", () => {
      it("a new user has no password; one that is set is found with the user by email", async () => {
        const user = await newUser("pro");
        expect(await store.findCredentials(user.email)).toEqual({ user, passwordHash: null });
        await store.setPasswordHash(user.id, "scrypt$hash");
        expect(await store.findCredentials(user.email)).toEqual({ user, passwordHash: "scrypt$hash" });
        expect(await store.findCredentials("nobody@example.test")).toBeNull();
        // The hash never rides along with the user elsewhere.
        expect(await store.findUserById(user.id)).toEqual(user);
      });

      it("finds a session with its user until it is revoked or expires", async () => {
        const user = await newUser();
        const session = await store.createSession({
          id: randomUUID(),
          userId: user.id,
          createdAt: "2026-01-01T00:00:00.000Z",
          expiresAt: "2026-01-08T00:00:00.000Z",
        });
        expect(session.revokedAt).toBeNull();
        expect(await store.findActiveSession(session.id, "2026-01-02T00:00:00.000Z")).toEqual({
          session,
          user,
        });
        expect(await store.findActiveSession(session.id, "2026-01-08T00:00:00.000Z")).toBeNull();
        expect(await store.findActiveSession(randomUUID(), "2026-01-02T00:00:00.000Z")).toBeNull();
        await store.revokeSession(session.id, "2026-01-03T00:00:00.000Z");
        expect(await store.findActiveSession(session.id, "2026-01-03T00:00:01.000Z")).toBeNull();
      });

      it("revokes a key by id only for its owner when the user is given", async () => {
        const owner = await newUser();
        const other = await newUser();
        const key = await newKey(owner.id);
        expect(await store.revokeKey({ id: key.id, userId: other.id })).toBeNull();
        expect((await store.listKeys(owner.id))[0]?.revokedAt).toBeNull();
        expect((await store.revokeKey({ id: key.id, userId: owner.id }))?.id).toBe(key.id);
      });
    });

    describe("files", () => {
      it("creates a file and reads it back unchanged", async () => {
        const user = await newUser();
        const file = fileFor(user.id, {
          status: "failed",
          error: { code: "pdf_corrupt", message: "The PDF is damaged." },
          pageCount: 12,
          durationS: null,
          passageCount: 40,
          progress: 0.25,
          sizeBytes: 5_000_000_000,
        });
        await store.createFile(file);
        expect(await store.getFile(user.id, file.id)).toEqual(file);
        expect(await store.getFileById(file.id)).toEqual(file);
      });

      it("getFile is scoped to the owner: another user's id returns null", async () => {
        const owner = await newUser();
        const stranger = await newUser();
        const file = fileFor(owner.id);
        await store.createFile(file);
        expect(await store.getFile(stranger.id, file.id)).toBeNull();
        expect(await store.getFile(owner.id, randomUUID())).toBeNull();
      });

      it("getFileById finds any user's file, and returns null for an unknown id", async () => {
        const owner = await newUser();
        const file = fileFor(owner.id);
        await store.createFile(file);
        expect((await store.getFileById(file.id))?.userId).toBe(owner.id);
        expect(await store.getFileById(randomUUID())).toBeNull();
      });

      it("getFiles returns only the caller's files among the ids, once each", async () => {
        const user = await newUser();
        const other = await newUser();
        const a = fileFor(user.id);
        const b = fileFor(user.id);
        const c = fileFor(user.id);
        const foreign = fileFor(other.id);
        for (const f of [a, b, c, foreign]) await store.createFile(f);

        const files = await store.getFiles(user.id, [a.id, b.id, b.id, foreign.id, randomUUID()]);
        expect(files.map((f) => f.id).sort()).toEqual([a.id, b.id].sort());
        expect(files.find((f) => f.id === a.id)).toEqual(a);
        expect(await store.getFiles(user.id, [])).toEqual([]);
      });

      it("listFiles returns the user's files newest first, without other users' files", async () => {
        const user = await newUser();
        const other = await newUser();
        const older = fileFor(user.id, { createdAt: "2025-01-01T00:00:00.000Z" });
        const newest = fileFor(user.id, { createdAt: "2025-03-01T00:00:00.000Z" });
        const middle = fileFor(user.id, { createdAt: "2025-02-01T00:00:00.000Z" });
        for (const f of [older, newest, middle, fileFor(other.id)]) await store.createFile(f);

        const page = await store.listFiles(user.id, { limit: 10 });
        expect(page.files.map((f) => f.id)).toEqual([newest.id, middle.id, older.id]);
        expect(page.files[0]).toEqual(newest);
        expect(page.nextCursor).toBeNull();
      });

      it("listFiles of a user without files is an empty last page", async () => {
        const user = await newUser();
        expect(await store.listFiles(user.id, { limit: 5 })).toEqual({ files: [], nextCursor: null });
      });

      it("listFiles pages through every file exactly once, even when files share a creation time", async () => {
        const user = await newUser();
        const other = await newUser();
        const created: FileRecord[] = [];
        // 23 files over 8 distinct timestamps: runs of equal created_at straddle page boundaries.
        for (let i = 0; i < 23; i++) {
          const minute = String(Math.floor(i / 3)).padStart(2, "0");
          const file = fileFor(user.id, { createdAt: `2025-04-01T10:${minute}:00.000Z` });
          created.push(file);
          await store.createFile(file);
        }
        await store.createFile(fileFor(other.id, { createdAt: "2025-04-01T10:03:00.000Z" }));

        const seen: FileRecord[] = [];
        let cursor: string | undefined;
        let pages = 0;
        for (;;) {
          const page = await store.listFiles(user.id, { limit: 4, cursor });
          pages += 1;
          expect(page.files.length).toBeLessThanOrEqual(4);
          seen.push(...page.files);
          if (page.nextCursor === null) break;
          expect(page.files).toHaveLength(4);
          cursor = page.nextCursor;
          expect(pages).toBeLessThan(20);
        }

        expect(pages).toBe(6);
        const ids = seen.map((f) => f.id);
        expect(new Set(ids).size).toBe(ids.length);
        expect([...ids].sort()).toEqual(created.map((f) => f.id).sort());
        for (let i = 1; i < seen.length; i++) {
          expect(seen[i - 1]!.createdAt >= seen[i]!.createdAt).toBe(true);
        }
      });

      it("listFiles gives no next cursor when the last page is exactly full", async () => {
        const user = await newUser();
        for (let i = 0; i < 4; i++) {
          await store.createFile(fileFor(user.id, { createdAt: `2025-05-0${i + 1}T00:00:00.000Z` }));
        }
        const first = await store.listFiles(user.id, { limit: 2 });
        expect(first.nextCursor).not.toBeNull();
        const second = await store.listFiles(user.id, { limit: 2, cursor: first.nextCursor ?? undefined });
        expect(second.files).toHaveLength(2);
        expect(second.nextCursor).toBeNull();
      });

      it("a file deleted between pages does not break pagination", async () => {
        const user = await newUser();
        const files = [1, 2, 3, 4, 5].map((d) =>
          fileFor(user.id, { createdAt: `2025-06-0${d}T00:00:00.000Z` }),
        );
        for (const f of files) await store.createFile(f);
        const first = await store.listFiles(user.id, { limit: 2 });
        expect(first.files.map((f) => f.id)).toEqual([files[4]!.id, files[3]!.id]);
        // The cursor's own file goes away: the next page still starts right after it.
        await store.deleteFile(user.id, files[3]!.id);
        const second = await store.listFiles(user.id, { limit: 2, cursor: first.nextCursor ?? undefined });
        expect(second.files.map((f) => f.id)).toEqual([files[2]!.id, files[1]!.id]);
      });

      it("keeps a file's metadata as given, and {} when none was given", async () => {
        const user = await newUser();
        const metadata = { team: "search", year: 2024, draft: false, tags: ["a", "b"], ratio: 0.5 };
        const described = fileFor(user.id, { metadata });
        const plain = fileFor(user.id);
        await store.createFile(described);
        await store.createFile(plain);
        expect((await store.getFile(user.id, described.id))?.metadata).toEqual(metadata);
        expect((await store.getFile(user.id, plain.id))?.metadata).toEqual({});
        expect((await store.getFiles(user.id, [described.id]))[0]?.metadata).toEqual(metadata);
      });

      it("listFiles filters by id, kind, creation time and metadata, every condition at once", async () => {
        const user = await newUser();
        const other = await newUser();
        const at = (day: number) => `2025-07-0${day}T12:00:00.000Z`;
        const a = fileFor(user.id, { createdAt: at(1), metadata: { team: "search", year: 2024 } });
        const b = fileFor(user.id, {
          createdAt: at(2),
          fileType: "audio",
          metadata: { team: "ops", tags: ["x", "y"] },
        });
        const c = fileFor(user.id, { createdAt: at(3), metadata: { team: "search", draft: true } });
        const d = fileFor(user.id, { createdAt: at(4) });
        // Another user's file passes every filter below: it must never appear.
        const theirs = fileFor(other.id, { createdAt: at(3), metadata: { team: "search", year: 2024 } });
        for (const f of [a, b, c, d, theirs]) await store.createFile(f);
        const ids = async (filter: Parameters<MetadataStore["listFiles"]>[1]["filter"]) =>
          (await store.listFiles(user.id, { limit: 10, filter })).files.map((f) => f.id);

        expect(await ids({ fileIds: [a.id, c.id, theirs.id] })).toEqual([c.id, a.id]);
        expect(await ids({ fileTypes: ["audio"] })).toEqual([b.id]);
        expect(await ids({ fileTypes: ["audio", "pdf"] })).toEqual([d.id, c.id, b.id, a.id]);
        // Both bounds exclusive.
        expect(await ids({ createdAfter: at(1), createdBefore: at(4) })).toEqual([c.id, b.id]);
        expect(await ids({ metadata: { team: "search" } })).toEqual([c.id, a.id]);
        // Numbers and booleans compare as they are written; a list matches each of its items.
        expect(await ids({ metadata: { year: "2024" } })).toEqual([a.id]);
        expect(await ids({ metadata: { draft: "true" } })).toEqual([c.id]);
        expect(await ids({ metadata: { tags: "y" } })).toEqual([b.id]);
        expect(await ids({ metadata: { team: "search", year: "2024" } })).toEqual([a.id]);
        expect(await ids({ metadata: { team: "nobody" } })).toEqual([]);
        expect(await ids({ metadata: { team: "search" }, createdAfter: at(1) })).toEqual([c.id]);
      });

      it("listFiles pages within a filter, and a deleted file's metadata goes with it", async () => {
        const user = await newUser();
        const files = [1, 2, 3, 4, 5].map((d) =>
          fileFor(user.id, {
            createdAt: `2025-08-0${d}T00:00:00.000Z`,
            metadata: { batch: d % 2 === 1 ? "odd" : "even" },
          }),
        );
        for (const f of files) await store.createFile(f);
        const filter = { metadata: { batch: "odd" } };
        const first = await store.listFiles(user.id, { limit: 2, filter });
        expect(first.files.map((f) => f.id)).toEqual([files[4]!.id, files[2]!.id]);
        const second = await store.listFiles(user.id, {
          limit: 2,
          filter,
          cursor: first.nextCursor ?? undefined,
        });
        expect(second).toEqual({ files: [files[0]], nextCursor: null });

        await store.deleteFile(user.id, files[4]!.id);
        const after = await store.listFiles(user.id, { limit: 10, filter });
        expect(after.files.map((f) => f.id)).toEqual([files[2]!.id, files[0]!.id]);
      });

      it("listUnfinishedFiles returns pending and processing files of every user, oldest first", async () => {
        const a = await newUser();
        const b = await newUser();
        const pendingB = fileFor(b.id, { status: "pending", createdAt: "2025-01-03T00:00:00.000Z" });
        const processingA = fileFor(a.id, { status: "processing", createdAt: "2025-01-01T00:00:00.000Z" });
        const pendingA = fileFor(a.id, { status: "pending", createdAt: "2025-01-02T00:00:00.000Z" });
        const ready = fileFor(a.id, { status: "ready", createdAt: "2024-12-01T00:00:00.000Z" });
        const failed = fileFor(b.id, {
          status: "failed",
          error: { code: "x", message: "y" },
          createdAt: "2024-12-02T00:00:00.000Z",
        });
        for (const f of [pendingB, processingA, pendingA, ready, failed]) await store.createFile(f);

        const unfinished = await store.listUnfinishedFiles({ limit: 10 });
        expect(unfinished.map((f) => f.id)).toEqual([processingA.id, pendingA.id, pendingB.id]);
        expect(unfinished[0]).toEqual(processingA);

        const limited = await store.listUnfinishedFiles({ limit: 2 });
        expect(limited.map((f) => f.id)).toEqual([processingA.id, pendingA.id]);
      });

      it("listUnfinishedFiles with updatedBefore returns only work that has not moved since then", async () => {
        const user = await newUser();
        const stalled = fileFor(user.id, {
          status: "processing",
          createdAt: "2025-01-01T00:00:00.000Z",
          updatedAt: "2025-01-01T00:05:00.000Z",
        });
        const moving = fileFor(user.id, {
          status: "processing",
          createdAt: "2025-01-01T00:01:00.000Z",
          updatedAt: "2025-01-01T00:05:00.000Z",
        });
        const recent = fileFor(user.id, {
          status: "pending",
          createdAt: "2025-01-01T00:02:00.000Z",
          updatedAt: "2025-01-01T00:20:00.000Z",
        });
        for (const f of [stalled, moving, recent]) await store.createFile(f);
        // Progress on `moving` touches it now, long after the cut-off.
        await store.updateFile(moving.id, { progress: 0.5 }, { status: FileStatus.options });

        const cutOff = "2025-01-01T00:10:00.000Z";
        const result = await store.listUnfinishedFiles({ limit: 10, updatedBefore: cutOff });
        expect(result.map((f) => f.id)).toEqual([stalled.id]);

        const all = await store.listUnfinishedFiles({ limit: 10 });
        expect(all.map((f) => f.id)).toEqual([stalled.id, moving.id, recent.id]);
      });

      it("claimUnfinishedFile gives a stalled file to one of many claimants at once, and only if it has not moved", async () => {
        const user = await newUser();
        const stalled = fileFor(user.id, {
          status: "processing",
          createdAt: "2025-01-01T00:00:00.000Z",
          updatedAt: "2025-01-01T00:05:00.000Z",
        });
        const done = fileFor(user.id, { status: "ready", updatedAt: "2025-01-01T00:05:00.000Z" });
        for (const f of [stalled, done]) await store.createFile(f);

        const claims = await Promise.all(
          Array.from({ length: 10 }, () => store.claimUnfinishedFile(stalled.id, stalled.updatedAt)),
        );
        const won = claims.filter((c) => c !== null);
        expect(won).toHaveLength(1);
        expect(won[0]).toMatchObject({ id: stalled.id, status: "processing" });
        expect(won[0]!.updatedAt > stalled.updatedAt).toBe(true);
        // Claimed: read before the claim, it is no longer what anyone saw.
        expect(await store.claimUnfinishedFile(stalled.id, stalled.updatedAt)).toBeNull();
        // A finished file is never claimed.
        expect(await store.claimUnfinishedFile(done.id, done.updatedAt)).toBeNull();
      });

      it("claimUnfinishedFile counts the re-queues of started work only, and updateFile starts the count again", async () => {
        const user = await newUser();
        const started = fileFor(user.id, { status: "processing", updatedAt: "2025-01-01T00:05:00.000Z" });
        const waiting = fileFor(user.id, { status: "pending", updatedAt: "2025-01-01T00:05:00.000Z" });
        for (const f of [started, waiting]) await store.createFile(f);

        let seen = started.updatedAt;
        for (const expected of [1, 2, 3]) {
          const claimed = await store.claimUnfinishedFile(started.id, seen);
          expect(claimed?.requeues).toBe(expected);
          seen = claimed!.updatedAt;
        }
        // Still waiting in line when its process stopped: nothing of it had run.
        expect((await store.claimUnfinishedFile(waiting.id, waiting.updatedAt))?.requeues).toBe(0);

        const retried = await store.updateFile(
          started.id,
          { status: "pending", requeues: 0 },
          { status: FileStatus.options },
        );
        await store.updateFile(started.id, { status: "processing" }, { status: FileStatus.options });
        const again = await store.getFileById(started.id);
        expect((await store.claimUnfinishedFile(started.id, again!.updatedAt))?.requeues).toBe(1);
        expect(retried).not.toHaveProperty("requeues");
      });

      it("updateFile changes only the given fields and moves updatedAt forward", async () => {
        const user = await newUser();
        const file = fileFor(user.id, { status: "pending", pageCount: 3 });
        await store.createFile(file);

        const updated = await store.updateFile(
          file.id,
          { status: "processing", progress: 0.4 },
          { status: FileStatus.options },
        );
        expect(updated).toEqual({
          ...file,
          status: "processing",
          progress: 0.4,
          updatedAt: expect.any(String),
        });
        expect(updated!.updatedAt > file.updatedAt).toBe(true);
        expect(await store.getFile(user.id, file.id)).toEqual(updated);

        const counted = await store.updateFile(
          file.id,
          { passageCount: 17, pageCount: 4 },
          { status: FileStatus.options },
        );
        expect(counted).toMatchObject({
          status: "processing",
          progress: 0.4,
          passageCount: 17,
          pageCount: 4,
          durationS: null,
        });
      });

      it("updateFile sets an error and clears it again with null", async () => {
        const user = await newUser();
        const file = fileFor(user.id);
        await store.createFile(file);

        const failed = await store.updateFile(
          file.id,
          {
            status: "failed",
            error: { code: "pdf_encrypted", message: "The PDF is protected by a password." },
          },
          { status: FileStatus.options },
        );
        expect(failed?.error).toEqual({
          code: "pdf_encrypted",
          message: "The PDF is protected by a password.",
        });
        expect((await store.getFileById(file.id))?.error).toEqual(failed?.error);

        // Leaving error out keeps it.
        const stillFailed = await store.updateFile(file.id, { progress: 1 }, { status: FileStatus.options });
        expect(stillFailed?.error).toEqual(failed?.error);

        const retried = await store.updateFile(
          file.id,
          { status: "pending", error: null },
          { status: FileStatus.options },
        );
        expect(retried?.error).toBeNull();
        expect(retried?.status).toBe("pending");
        expect((await store.getFileById(file.id))?.error).toBeNull();
      });

      it("updateFile can set nullable counters back to null", async () => {
        const user = await newUser();
        const file = fileFor(user.id, { pageCount: 2, durationS: null, passageCount: 5, progress: 1 });
        await store.createFile(file);
        const reset = await store.updateFile(
          file.id,
          {
            pageCount: null,
            durationS: null,
            passageCount: null,
            progress: null,
          },
          { status: FileStatus.options },
        );
        expect(reset).toMatchObject({ pageCount: null, durationS: null, passageCount: null, progress: null });
      });

      it("updateFile applies only while the file is as the writer expects (status, updatedAt, progress up to)", async () => {
        const user = await newUser();
        const file = fileFor(user.id, { status: "processing", progress: 0.5 });
        await store.createFile(file);

        // Not in an expected status: nothing changes.
        expect(await store.updateFile(file.id, { status: "failed" }, { status: ["pending"] })).toBeNull();
        // Progress only moves forward.
        expect(
          await store.updateFile(file.id, { progress: 0.3 }, { status: ["processing"], progressUpTo: 0.3 }),
        ).toBeNull();
        const forward = await store.updateFile(
          file.id,
          { progress: 0.7 },
          { status: ["processing"], progressUpTo: 0.7 },
        );
        expect(forward).toMatchObject({ status: "processing", progress: 0.7 });
        // Read before the last change: stale.
        expect(
          await store.updateFile(
            file.id,
            { status: "ready" },
            { status: ["processing"], updatedAt: file.updatedAt },
          ),
        ).toBeNull();
        expect(await store.getFileById(file.id)).toEqual(forward);

        // Of many writers that saw the same record, one moves it.
        const moves = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            store.updateFile(
              file.id,
              { status: i % 2 ? "ready" : "failed" },
              { status: ["processing"], updatedAt: forward!.updatedAt },
            ),
          ),
        );
        expect(moves.filter((m) => m !== null)).toHaveLength(1);
        // A late progress report about a finished file: null, and the file as it was.
        const finished = await store.getFileById(file.id);
        expect(
          await store.updateFile(
            file.id,
            { status: "processing", progress: 0.9 },
            { status: ["pending", "processing"], progressUpTo: 0.9 },
          ),
        ).toBeNull();
        expect(await store.getFileById(file.id)).toEqual(finished);
      });

      it("updateFile records where a file's passages stand for ai search, and moves it only from what the writer expects", async () => {
        const user = await newUser();
        const file = fileFor(user.id, { status: "processing" });
        await store.createFile(file);
        expect((await store.getFileById(file.id))?.aiVectors).toBeUndefined();
        const ready = await store.updateFile(
          file.id,
          { status: "ready", aiVectors: "pending" },
          { status: ["processing"] },
        );
        expect(ready).toMatchObject({ status: "ready", aiVectors: "pending" });
        const encode = () =>
          store.updateFile(file.id, { aiVectors: "ready" }, { status: ["ready"], aiVectors: "pending" });
        expect(await encode()).toMatchObject({ status: "ready", aiVectors: "ready" });
        // Once: a second report finds it ready already.
        expect(await encode()).toBeNull();
        // Indexed again with its vectors: nothing to wait for.
        const cleared = await store.updateFile(file.id, { aiVectors: null }, { status: ["ready"] });
        expect(cleared).not.toHaveProperty("aiVectors");
        expect(await encode()).toBeNull();
      });

      it("updateFile of an unknown file returns null", async () => {
        expect(
          await store.updateFile(randomUUID(), { status: "ready" }, { status: FileStatus.options }),
        ).toBeNull();
      });

      it("deleteFile is scoped to the owner and returns the deleted record", async () => {
        const owner = await newUser();
        const stranger = await newUser();
        const file = fileFor(owner.id);
        const kept = fileFor(owner.id);
        await store.createFile(file);
        await store.createFile(kept);

        expect(await store.deleteFile(stranger.id, file.id)).toBeNull();
        expect(await store.getFile(owner.id, file.id)).toEqual(file);

        expect(await store.deleteFile(owner.id, file.id)).toEqual(file);
        expect(await store.getFile(owner.id, file.id)).toBeNull();
        expect(await store.getFileById(file.id)).toBeNull();
        expect(await store.deleteFile(owner.id, file.id)).toBeNull();
        expect(await store.getFile(owner.id, kept.id)).toEqual(kept);
      });
    });

    describe("outbox", () => {
      const entryFor = (fileId: string, availableAt: string) => ({
        id: randomUUID(),
        topic: "file.uploaded.pdf",
        message: { fileId, note: "ünïcode" },
        fileId,
        availableAt,
      });
      const PAST = "2025-03-01T10:00:00.000Z";
      const FUTURE = "2999-01-01T00:00:00.000Z";
      const now = () => new Date().toISOString();

      it("stores a file's entries with its record, held until their time or a release", async () => {
        const user = await newUser();
        const file = fileFor(user.id);
        const held = entryFor(file.id, FUTURE);
        await store.createFile(file, [held]);
        expect(await store.countOutboxEntries()).toBe(1);
        expect(await store.claimDueOutboxEntries(now(), FUTURE, 10)).toEqual([]);

        // Its upload's request completed: its process claims it, held or not.
        const lease = new Date(Date.now() + 300).toISOString();
        const [claimed] = await store.claimFileOutbox(file.id, lease);
        expect(claimed).toMatchObject({ ...held, availableAt: lease, attempts: 1 });
        // Claimed: nobody claims it again before its lease ends.
        expect(await store.claimFileOutbox(file.id, FUTURE)).toEqual([]);
        expect(await store.claimDueOutboxEntries(now(), FUTURE, 10)).toEqual([]);
        // Not published within its lease (the process died, the bus refused): due again.
        await sleep(400);
        expect(await store.claimDueOutboxEntries(now(), FUTURE, 10)).toMatchObject([
          { id: held.id, attempts: 2 },
        ]);
        await store.deleteOutboxEntry(held.id);
        expect(await store.countOutboxEntries()).toBe(0);
      });

      it("gives each due entry to one of many claimants at once, and again once its lease is over", async () => {
        const user = await newUser();
        const files = Array.from({ length: 6 }, () => fileFor(user.id));
        for (const f of files) await store.createFile(f, [entryFor(f.id, PAST)]);
        const lease = new Date(Date.now() + 300).toISOString();
        const claims = await Promise.all(
          Array.from({ length: 5 }, () => store.claimDueOutboxEntries(now(), lease, 100)),
        );
        const ids = claims.flat().map((e) => e.fileId);
        expect(ids.sort()).toEqual(files.map((f) => f.id).sort());
        await sleep(400);
        const again = await store.claimDueOutboxEntries(now(), FUTURE, 100);
        expect(again.map((e) => e.attempts)).toEqual(files.map(() => 2));
      });

      it("removes a file's entries with its record, and a file made with none has none", async () => {
        const user = await newUser();
        const file = fileFor(user.id);
        await store.createFile(file, [entryFor(file.id, FUTURE)]);
        await store.createFile(fileFor(user.id));
        expect(await store.countOutboxEntries()).toBe(1);
        await store.deleteFile(user.id, file.id);
        expect(await store.countOutboxEntries()).toBe(0);
      });

      it("stores neither the record nor its entries when either cannot be stored", async () => {
        const user = await newUser();
        const first = fileFor(user.id);
        const entry = entryFor(first.id, FUTURE);
        await store.createFile(first, [entry]);
        // The same entry id again: the second file's record is not kept either.
        const second = fileFor(user.id);
        // Whether it rejects, not with what: better-sqlite3 builds its errors with the class of the
        // first test file in the worker to load it, which is no Error of this file's realm.
        const refused = await store.createFile(second, [{ ...entry, fileId: second.id }]).then(
          () => false,
          () => true,
        );
        expect(refused).toBe(true);
        expect(await store.getFileById(second.id)).toBeNull();
        expect(await store.countOutboxEntries()).toBe(1);
      });
    });

    describe("usage", () => {
      const month = "2025-03";

      it("reserves uploads up to the quota, then refuses", async () => {
        const user = await newUser();
        expect(await store.uploadsThisMonth(user.id, month)).toBe(0);
        for (let i = 1; i <= 3; i++) {
          expect(await store.reserveUpload(user.id, month, 3)).toBe(true);
          expect(await store.uploadsThisMonth(user.id, month)).toBe(i);
        }
        expect(await store.reserveUpload(user.id, month, 3)).toBe(false);
        expect(await store.reserveUpload(user.id, month, 3)).toBe(false);
        expect(await store.uploadsThisMonth(user.id, month)).toBe(3);
      });

      it("treats a quota of 0 as unlimited", async () => {
        const user = await newUser("enterprise");
        for (let i = 0; i < 25; i++) expect(await store.reserveUpload(user.id, month, 0)).toBe(true);
        expect(await store.uploadsThisMonth(user.id, month)).toBe(25);
      });

      it("releaseUpload gives one upload back", async () => {
        const user = await newUser();
        expect(await store.reserveUpload(user.id, month, 2)).toBe(true);
        expect(await store.reserveUpload(user.id, month, 2)).toBe(true);
        expect(await store.reserveUpload(user.id, month, 2)).toBe(false);
        await store.releaseUpload(user.id, month);
        expect(await store.uploadsThisMonth(user.id, month)).toBe(1);
        expect(await store.reserveUpload(user.id, month, 2)).toBe(true);
        expect(await store.reserveUpload(user.id, month, 2)).toBe(false);
      });

      it("counts each month and each user on its own", async () => {
        const user = await newUser();
        const other = await newUser();
        expect(await store.reserveUpload(user.id, "2025-01", 1)).toBe(true);
        expect(await store.reserveUpload(user.id, "2025-01", 1)).toBe(false);
        expect(await store.reserveUpload(user.id, "2025-02", 1)).toBe(true);
        expect(await store.reserveUpload(other.id, "2025-01", 1)).toBe(true);
        expect(await store.uploadsThisMonth(user.id, "2025-01")).toBe(1);
        expect(await store.uploadsThisMonth(user.id, "2025-02")).toBe(1);
        expect(await store.uploadsThisMonth(user.id, "2025-04")).toBe(0);
        expect(await store.uploadsThisMonth(other.id, "2025-01")).toBe(1);
      });

      it("concurrent reservations never exceed the quota", async () => {
        const user = await newUser();
        const results = await Promise.all(
          Array.from({ length: 30 }, () => store.reserveUpload(user.id, month, 7)),
        );
        expect(results.filter(Boolean)).toHaveLength(7);
        expect(await store.uploadsThisMonth(user.id, month)).toBe(7);
      });

      it("concurrent reservations and releases keep the count consistent", async () => {
        const user = await newUser();
        for (let i = 0; i < 5; i++) await store.reserveUpload(user.id, month, 10);
        await Promise.all([
          ...Array.from({ length: 5 }, () => store.releaseUpload(user.id, month)),
          ...Array.from({ length: 3 }, () => store.reserveUpload(user.id, month, 10)),
        ]);
        expect(await store.uploadsThisMonth(user.id, month)).toBe(3);
      });

      it("records searches and uploads per day and key, the dashboard's own as key null", async () => {
        const user = await newUser();
        const other = await newUser();
        const key = await newKey(user.id);
        const record = (keyId: string | null, day: string, kind: "search" | "upload", userId = user.id) =>
          store.recordActivity({ userId, keyId, day, kind });
        await record(key.id, "2025-03-01", "search");
        await record(key.id, "2025-03-01", "search");
        await record(key.id, "2025-03-01", "upload");
        await record(null, "2025-03-01", "upload");
        await record(key.id, "2025-03-03", "search");
        await record(key.id, "2025-02-28", "search");
        await record(null, "2025-03-02", "search", other.id);
        expect(await store.dailyActivity(user.id, "2025-03-01")).toEqual([
          { day: "2025-03-01", keyId: null, searches: 0, uploads: 1 },
          { day: "2025-03-01", keyId: key.id, searches: 2, uploads: 1 },
          { day: "2025-03-03", keyId: key.id, searches: 1, uploads: 0 },
        ]);
        expect(await store.dailyActivity(other.id, "2025-01-01")).toEqual([
          { day: "2025-03-02", keyId: null, searches: 1, uploads: 0 },
        ]);
        expect(await store.dailyActivity(randomUUID(), "2025-01-01")).toEqual([]);
      });

      it("concurrent activity of one key on one day is all counted", async () => {
        const user = await newUser();
        const key = await newKey(user.id);
        await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            store.recordActivity({
              userId: user.id,
              keyId: key.id,
              day: "2025-03-05",
              kind: i % 4 ? "search" : "upload",
            }),
          ),
        );
        expect(await store.dailyActivity(user.id, "2025-03-05")).toEqual([
          { day: "2025-03-05", keyId: key.id, searches: 15, uploads: 5 },
        ]);
      });
    });
  });
}
