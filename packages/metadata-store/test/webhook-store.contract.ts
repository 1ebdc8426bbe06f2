import { randomUUID } from "node:crypto";
import type { MetadataStore, WebhookDelivery } from "../src/metadata-store.ts";
import type { MetadataStoreHarness } from "./metadata-store.contract.ts";

/**
 * The behaviour every WebhookStore adapter promises (see src/webhook-store.ts), on a migrated
 * store over an empty database, one per test.
 */
export function webhookStoreContract(name: string, make: () => Promise<MetadataStoreHarness>): void {
  describe(`WebhookStore contract: ${name}`, () => {
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

    const T0 = "2026-01-01T00:00:00.000Z";
    const at = (seconds: number) => new Date(Date.parse(T0) + seconds * 1000).toISOString();
    const newUser = () => store.createUser({ email: `${randomUUID()}@example.test`, plan: "free" });
    const newEndpoint = (
      userId: string,
      events: ("file.ready" | "file.failed" | "file.deleted")[] = ["file.ready"],
    ) =>
      store.createWebhookEndpoint(
        {
          id: randomUUID(),
          userId,
          url: "https://hooks.example.test/locus",
          description: "test",
          events,
          secret: "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0",
        },
        T0,
      );
    const enqueue = (endpointId: string, userId: string, eventId = randomUUID(), createdAt = T0) =>
      store.enqueueDelivery({
        id: randomUUID(),
        endpointId,
        userId,
        eventId,
        eventType: "file.ready",
        payload: `{"type":"file.ready","event":"${eventId}"}`,
        maxAttempts: 3,
        createdAt,
      });
    const failure = (seconds: number, next: number | null) => ({
      attempt: { attemptedAt: at(seconds), statusCode: 500, error: "HTTP 500", durationMs: 12 },
      status: next === null ? ("failed" as const) : ("pending" as const),
      nextAttemptAt: next === null ? null : at(next),
    });

    it("keeps each account's endpoints to itself: another user's id reads, changes and deletes as missing", async () => {
      const owner = await newUser();
      const other = await newUser();
      const endpoint = await newEndpoint(owner.id, ["file.ready", "file.deleted"]);
      expect(endpoint).toMatchObject({
        userId: owner.id,
        events: ["file.ready", "file.deleted"],
        disabledAt: null,
      });
      expect(await store.getWebhookEndpoint(owner.id, endpoint.id)).toEqual(endpoint);
      expect(await store.listWebhookEndpoints(owner.id)).toEqual([endpoint]);

      expect(await store.getWebhookEndpoint(other.id, endpoint.id)).toBeNull();
      expect(await store.listWebhookEndpoints(other.id)).toEqual([]);
      expect(
        await store.updateWebhookEndpoint(other.id, endpoint.id, { url: "https://x.test" }, at(1)),
      ).toBeNull();
      expect(await store.deleteWebhookEndpoint(other.id, endpoint.id)).toBe(false);
      expect(await store.listDeliveries(other.id, endpoint.id, { limit: 10 })).toEqual({
        deliveries: [],
        nextCursor: null,
      });

      const changed = await store.updateWebhookEndpoint(
        owner.id,
        endpoint.id,
        { url: "https://new.example.test/", events: ["file.failed"], description: "new" },
        at(1),
      );
      expect(changed).toMatchObject({
        url: "https://new.example.test/",
        events: ["file.failed"],
        updatedAt: at(1),
      });
      expect(await store.deleteWebhookEndpoint(owner.id, endpoint.id)).toBe(true);
      expect(await store.getWebhookEndpoint(owner.id, endpoint.id)).toBeNull();
    });

    it("keeps a rotated-out secret with its overlap's end; a second rotation drops the older one", async () => {
      const user = await newUser();
      const endpoint = await newEndpoint(user.id);
      const first = await store.updateWebhookEndpoint(
        user.id,
        endpoint.id,
        { secret: "whsec_bmV3LW9uZQ==", previousSecretExpiresAt: at(100) },
        at(1),
      );
      expect(first).toMatchObject({
        secret: "whsec_bmV3LW9uZQ==",
        previousSecret: endpoint.secret,
        previousSecretExpiresAt: at(100),
      });
      const [claimed] = await (async () => {
        await enqueue(endpoint.id, user.id);
        return store.claimDueDeliveries("w", at(2), at(30), 10);
      })();
      expect(claimed?.endpoint).toEqual(first);
      const second = await store.updateWebhookEndpoint(
        user.id,
        endpoint.id,
        { secret: "whsec_dGhpcmQ=", previousSecretExpiresAt: at(200) },
        at(3),
      );
      expect(second).toMatchObject({
        previousSecret: "whsec_bmV3LW9uZQ==",
        previousSecretExpiresAt: at(200),
      });
      // No overlap (it ends at the change): no previous secret at all.
      const leaked = await store.updateWebhookEndpoint(
        user.id,
        endpoint.id,
        { secret: "whsec_Zm91cnRo", previousSecretExpiresAt: at(4) },
        at(4),
      );
      expect(leaked).toMatchObject({ previousSecret: null, previousSecretExpiresAt: null });
      // Other changes leave the secrets alone.
      const renamed = await store.updateWebhookEndpoint(user.id, endpoint.id, { description: "x" }, at(5));
      expect(renamed).toMatchObject({ secret: "whsec_Zm91cnRo", previousSecret: null });
    });

    it("finds the endpoints subscribed to an event type, disabled ones too (what they are owed is held)", async () => {
      const user = await newUser();
      const ready = await newEndpoint(user.id, ["file.ready"]);
      const both = await newEndpoint(user.id, ["file.ready", "file.failed"]);
      const disabled = await newEndpoint(user.id, ["file.ready"]);
      await store.disableWebhookEndpoint(disabled.id, "kept failing", at(1), at(0));
      const ids = (await store.endpointsFor(user.id, "file.ready")).map((e) => e.id).sort();
      expect(ids).toEqual([ready.id, both.id, disabled.id].sort());
      expect((await store.endpointsFor(user.id, "file.failed")).map((e) => e.id)).toEqual([both.id]);
      expect(await store.endpointsFor((await newUser()).id, "file.ready")).toEqual([]);
    });

    it("owes an event to an endpoint once, however often it is enqueued", async () => {
      const user = await newUser();
      const endpoint = await newEndpoint(user.id);
      const eventId = randomUUID();
      expect(await enqueue(endpoint.id, user.id, eventId)).toBe(true);
      expect(await enqueue(endpoint.id, user.id, eventId)).toBe(false);
      const page = await store.listDeliveries(user.id, endpoint.id, { limit: 10 });
      expect(page.deliveries).toHaveLength(1);
      expect(page.deliveries[0]).toMatchObject({ eventId, status: "pending", attempts: 0, attemptLog: [] });
    });

    it("leases a due delivery to one worker only, and hands it out again once the lease has run out", async () => {
      const user = await newUser();
      const endpoint = await newEndpoint(user.id);
      await enqueue(endpoint.id, user.id);
      const [a, b] = await Promise.all([
        store.claimDueDeliveries("worker-a", at(0), at(30), 10),
        store.claimDueDeliveries("worker-b", at(0), at(30), 10),
      ]);
      expect(a.length + b.length).toBe(1);
      const claimed = [...a, ...b][0];
      expect(claimed?.endpoint).toEqual(endpoint);
      // Still leased before it runs out; free again after (the worker crashed).
      expect(await store.claimDueDeliveries("worker-c", at(29), at(60), 10)).toEqual([]);
      const again = await store.claimDueDeliveries("worker-c", at(31), at(60), 10);
      expect(again).toHaveLength(1);
      // The first worker lost its lease: what it reports now changes nothing.
      const loser = a.length === 1 ? "worker-a" : "worker-b";
      expect(await store.recordAttempt(claimed!.delivery.id, loser, failure(32, 100))).toBe(false);
      expect(await store.recordAttempt(claimed!.delivery.id, "worker-c", failure(33, 100))).toBe(true);
      const [logged] = (await store.listDeliveries(user.id, endpoint.id, { limit: 1 })).deliveries;
      expect(logged).toMatchObject({
        attempts: 1,
        status: "pending",
        nextAttemptAt: at(100),
        lastStatusCode: 500,
      });
      expect(logged?.attemptLog).toEqual([
        expect.objectContaining({ attemptedAt: at(33), statusCode: 500, error: "HTTP 500", durationMs: 12 }),
      ]);
    });

    it("has one attempt in flight per endpoint, so one account's hanging receiver takes one slot", async () => {
      const user = await newUser();
      const slow = await newEndpoint(user.id);
      const other = await newEndpoint((await newUser()).id);
      await enqueue(slow.id, user.id);
      await enqueue(slow.id, user.id);
      await enqueue(other.id, other.userId);
      const first = await store.claimDueDeliveries("w", at(0), at(30), 10);
      expect(first.map((c) => c.endpoint.id).sort()).toEqual([slow.id, other.id].sort());
      // While the slow endpoint's attempt is leased, its next delivery waits.
      expect(await store.claimDueDeliveries("w2", at(1), at(31), 10)).toEqual([]);
      const held = first.find((c) => c.endpoint.id === slow.id)!;
      expect(await store.recordAttempt(held.delivery.id, "w", failure(2, 100))).toBe(true);
      const next = await store.claimDueDeliveries("w2", at(3), at(33), 10);
      expect(next).toHaveLength(1);
      expect(next[0]?.delivery.id).not.toBe(held.delivery.id);
    });

    it("ends deliveries held for a disabled endpoint past the cut, and no others", async () => {
      const user = await newUser();
      const held = await newEndpoint(user.id);
      const enabled = await newEndpoint(user.id);
      await enqueue(held.id, user.id, randomUUID(), at(0));
      await enqueue(held.id, user.id, randomUUID(), at(100));
      await enqueue(enabled.id, user.id, randomUUID(), at(0));
      await store.disableWebhookEndpoint(held.id, "Disabled by its owner.", at(1), at(1));
      expect(await store.expireHeldDeliveries(at(50), at(200), "Not sent: held too long.")).toBe(1);
      const [recent, old] = (await store.listDeliveries(user.id, held.id, { limit: 10 })).deliveries;
      expect(old).toMatchObject({
        status: "failed",
        nextAttemptAt: null,
        lastError: "Not sent: held too long.",
        updatedAt: at(200),
      });
      expect(recent).toMatchObject({ status: "pending" });
      const [other] = (await store.listDeliveries(user.id, enabled.id, { limit: 10 })).deliveries;
      expect(other).toMatchObject({ status: "pending" });
      // Enabled again, the one still held goes out.
      await store.updateWebhookEndpoint(user.id, held.id, { enable: true }, at(300));
      const claimed = await store.claimDueDeliveries("w", at(301), at(330), 10);
      expect(claimed.map((c) => c.delivery.id).sort()).toEqual([recent!.id, other!.id].sort());
    });

    it("claims only deliveries that are due and whose endpoint is enabled", async () => {
      const user = await newUser();
      const endpoint = await newEndpoint(user.id);
      await enqueue(endpoint.id, user.id, randomUUID(), at(50));
      expect(await store.claimDueDeliveries("w", at(10), at(40), 10)).toEqual([]);
      await store.disableWebhookEndpoint(endpoint.id, "kept failing", at(60), at(0));
      expect(await store.claimDueDeliveries("w", at(70), at(100), 10)).toEqual([]);
      await store.updateWebhookEndpoint(user.id, endpoint.id, { enable: true }, at(80));
      expect(await store.claimDueDeliveries("w", at(90), at(120), 10)).toHaveLength(1);
    });

    it("a success ends the delivery and is remembered on the endpoint, which then is not disabled", async () => {
      const user = await newUser();
      const endpoint = await newEndpoint(user.id);
      await enqueue(endpoint.id, user.id);
      const [claimed] = await store.claimDueDeliveries("w", at(0), at(30), 10);
      await store.recordAttempt(claimed!.delivery.id, "w", {
        attempt: { attemptedAt: at(1), statusCode: 204, error: null, durationMs: 3 },
        status: "succeeded",
        nextAttemptAt: null,
      });
      expect((await store.getWebhookEndpoint(user.id, endpoint.id))?.lastSuccessAt).toBe(at(1));
      expect(await store.claimDueDeliveries("w", at(100), at(130), 10)).toEqual([]);
      // A delivery that began before that success does not disable it; one after it would.
      expect(await store.disableWebhookEndpoint(endpoint.id, "failing", at(2), at(0))).toBe(false);
      expect(await store.disableWebhookEndpoint(endpoint.id, "failing", at(3), at(2))).toBe(true);
      expect(await store.getWebhookEndpoint(user.id, endpoint.id)).toMatchObject({
        disabledAt: at(3),
        disabledReason: "failing",
      });
      const enabled = await store.updateWebhookEndpoint(user.id, endpoint.id, { enable: true }, at(4));
      expect(enabled).toMatchObject({ disabledAt: null, disabledReason: null });
    });

    it("redelivers a finished delivery once, now; a pending one is only brought forward", async () => {
      const user = await newUser();
      const endpoint = await newEndpoint(user.id);
      await enqueue(endpoint.id, user.id);
      const [claimed] = await store.claimDueDeliveries("w", at(0), at(30), 10);
      const id = claimed!.delivery.id;
      await store.recordAttempt(id, "w", failure(1, null));
      expect(await store.redeliver((await newUser()).id, endpoint.id, id, at(5))).toBeNull();
      const again = await store.redeliver(user.id, endpoint.id, id, at(5));
      expect(again).toMatchObject({
        status: "pending",
        attempts: 1,
        maxAttempts: 2,
        nextAttemptAt: at(5),
        redeliveredAt: at(5),
      });
      const pushed = await store.redeliver(user.id, endpoint.id, id, at(6));
      expect(pushed).toMatchObject({ maxAttempts: 2, nextAttemptAt: at(6), redeliveredAt: at(5) });
      expect(await store.claimDueDeliveries("w", at(6), at(36), 10)).toHaveLength(1);
    });

    it("pages an endpoint's deliveries newest first with their attempts, and removes them with the endpoint", async () => {
      const user = await newUser();
      const endpoint = await newEndpoint(user.id);
      const events: string[] = [];
      for (let i = 0; i < 5; i++) {
        const eventId = randomUUID();
        events.push(eventId);
        await enqueue(endpoint.id, user.id, eventId, at(i));
      }
      const seen: WebhookDelivery[] = [];
      let cursor: string | undefined;
      for (;;) {
        const page = await store.listDeliveries(user.id, endpoint.id, { limit: 2, cursor });
        seen.push(...page.deliveries);
        if (!page.nextCursor) break;
        cursor = page.nextCursor;
      }
      expect(seen.map((d) => d.eventId)).toEqual([...events].reverse());
      expect(await store.deleteWebhookEndpoint(user.id, endpoint.id)).toBe(true);
      expect((await store.listDeliveries(user.id, endpoint.id, { limit: 10 })).deliveries).toEqual([]);
      expect(await store.claimDueDeliveries("w", at(100), at(130), 10)).toEqual([]);
    });

    it("prunes finished deliveries older than the cut, with their attempts, and keeps pending ones", async () => {
      const user = await newUser();
      const endpoint = await newEndpoint(user.id);
      await enqueue(endpoint.id, user.id, randomUUID(), at(0));
      await enqueue(endpoint.id, user.id, randomUUID(), at(1));
      // One at a time per endpoint: the first ends (failed) at 3 s, the second stays pending.
      const first = await store.claimDueDeliveries("w", at(2), at(30), 10);
      expect(first).toHaveLength(1);
      await store.recordAttempt(first[0]!.delivery.id, "w", failure(3, null));
      const second = await store.claimDueDeliveries("w", at(3), at(30), 10);
      expect(second).toHaveLength(1);
      await store.recordAttempt(second[0]!.delivery.id, "w", failure(3, 100));
      const claimed = [...first, ...second];
      expect(await store.pruneDeliveries(at(3), 10)).toBe(0);
      expect(await store.pruneDeliveries(at(4), 10)).toBe(1);
      const left = (await store.listDeliveries(user.id, endpoint.id, { limit: 10 })).deliveries;
      expect(left.map((d) => d.id)).toEqual([claimed[1]!.delivery.id]);
      expect(left[0]?.attemptLog).toHaveLength(1);
    });
  });
}
