import { randomUUID } from "node:crypto";
import type { FileEventType } from "@locus/contracts";
import type { MetadataStore, StoredEvent } from "../src/metadata-store.ts";
import type { MetadataStoreHarness } from "./metadata-store.contract.ts";

/**
 * The behaviour every EventStore adapter promises (see src/event-store.ts), on a migrated store
 * over an empty database, one per test.
 */
export function eventStoreContract(name: string, make: () => Promise<MetadataStoreHarness>): void {
  describe(`EventStore contract: ${name}`, () => {
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

    const T0 = Date.parse("2026-01-01T00:00:00.000Z");
    const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();
    const newUser = () => store.createUser({ email: `${randomUUID()}@example.test`, plan: "free" });
    const event = (userId: string, seconds: number, type: FileEventType = "file.ready"): StoredEvent => ({
      id: randomUUID(),
      userId,
      type,
      occurredAt: at(seconds),
      payload: JSON.stringify({ type, timestamp: at(seconds), data: { file: { id: "f" } } }),
    });

    it("keeps an event once, however often it is recorded, and never for a user who is gone", async () => {
      const user = await newUser();
      const ready = event(user.id, 1);
      expect(await store.recordEvent(ready)).toBe(true);
      expect(await store.recordEvent(ready)).toBe(false);
      expect(await store.getEvent(user.id, ready.id)).toEqual(ready);
      expect(await store.recordEvent(event(randomUUID(), 2))).toBe(false);
      // An instant with an offset is kept as UTC, so the log sorts every event by one clock.
      const offset = { ...event(user.id, 3), occurredAt: "2026-01-01T01:00:03.000+01:00" };
      await store.recordEvent(offset);
      expect((await store.getEvent(user.id, offset.id))?.occurredAt).toBe(at(3));
    });

    it("keeps each account's events to itself", async () => {
      const owner = await newUser();
      const other = await newUser();
      const mine = event(owner.id, 1);
      await store.recordEvent(mine);
      expect(await store.getEvent(other.id, mine.id)).toBeNull();
      expect(await store.listEvents(other.id, { limit: 10 })).toEqual({ events: [], nextCursor: null });
      expect((await store.listEvents(owner.id, { limit: 10 })).events).toEqual([mine]);
    });

    it("pages newest first to the end, filtered by type and time, with events added meanwhile never shifting a page", async () => {
      const user = await newUser();
      const recorded: StoredEvent[] = [];
      for (let i = 0; i < 7; i++) {
        const e = event(user.id, i * 10, i % 3 === 0 ? "file.deleted" : "file.ready");
        recorded.push(e);
        await store.recordEvent(e);
      }
      // Two events at the same instant are told apart by id.
      const twin = { ...event(user.id, 30), id: randomUUID() };
      recorded.push(twin);
      await store.recordEvent(twin);
      const newestFirst = [...recorded].sort((a, b) =>
        a.occurredAt === b.occurredAt ? b.id.localeCompare(a.id) : b.occurredAt.localeCompare(a.occurredAt),
      );

      const seen: string[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 10; pages++) {
        const page = await store.listEvents(user.id, { limit: 3, cursor });
        seen.push(...page.events.map((e) => e.id));
        if (pages === 0) await store.recordEvent(event(user.id, 1000));
        if (!page.nextCursor) break;
        cursor = page.nextCursor;
      }
      expect(seen).toEqual(newestFirst.map((e) => e.id));

      const deleted = await store.listEvents(user.id, { limit: 10, types: ["file.deleted"] });
      expect(deleted.events.map((e) => e.occurredAt)).toEqual([at(60), at(30), at(0)]);
      const between = await store.listEvents(user.id, {
        limit: 10,
        types: ["file.ready", "file.deleted"],
        occurredAfter: at(10),
        occurredBefore: at(50),
      });
      expect(between.events.map((e) => e.occurredAt)).toEqual([at(40), at(30), at(30), at(20)]);
    });

    it("prunes events older than the cut, in batches", async () => {
      const user = await newUser();
      for (let i = 0; i < 5; i++) await store.recordEvent(event(user.id, i));
      expect(await store.pruneEvents(at(3), 2)).toBe(2);
      expect(await store.pruneEvents(at(3), 2)).toBe(1);
      expect(await store.pruneEvents(at(3), 2)).toBe(0);
      const left = await store.listEvents(user.id, { limit: 10 });
      expect(left.events.map((e) => e.occurredAt)).toEqual([at(4), at(3)]);
    });
  });
}
