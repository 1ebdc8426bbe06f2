import { randomUUID } from "node:crypto";
import type { MessageOf, Topic } from "@locus/contracts";
import type { Bus, Delivery } from "../src/bus.ts";

export interface DeadLetterView {
  group: string;
  topic: Topic;
  payload: unknown;
}

export interface BusHarness {
  bus: Bus;
  /** What the adapter dead-lettered so far (InProcessBus: `deadLetters`; a broker: its dead-letter queue). */
  deadLetters(): Promise<DeadLetterView[]>;
  /** Closes the bus (if the test did not) and removes whatever the test left on the broker. */
  cleanup(): Promise<void>;
}

export interface BusContractOptions {
  /** Longest the suite waits for a delivery or a retry; brokers with slow back-off need more. */
  waitMs?: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(5);
  }
}

async function within<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A promise with its resolver outside, to hold a handler until the test lets it go. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

const deleted = (): MessageOf<"file.deleted"> => ({ fileId: randomUUID(), userId: randomUUID() });
const indexed = (): MessageOf<"file.indexed"> => ({
  fileId: randomUUID(),
  userId: randomUUID(),
  passageCount: 3,
  pageCount: 1,
});

/**
 * The behaviour every Bus adapter promises (see the JSDoc in src/bus.ts): asynchronous delivery,
 * one copy per consumer group, retries with attempt counting, dead letters after maxAttempts,
 * bounded concurrency, validated payloads, and a close() that waits for handlers in flight.
 * Group names are random per test, so adapters over a shared broker need no purging between runs.
 */
export function busContract(
  name: string,
  make: () => Promise<BusHarness>,
  options: BusContractOptions = {},
): void {
  const waitMs = options.waitMs ?? 5_000;

  describe(`Bus contract: ${name}`, () => {
    let harness: BusHarness;
    let bus: Bus;

    beforeEach(async () => {
      harness = await make();
      bus = harness.bus;
    });

    afterEach(async () => {
      await harness.cleanup();
    });

    const group = (label: string) => `${label}-${randomUUID()}`;

    it("check() succeeds on an open bus", async () => {
      await expect(bus.check()).resolves.toBeUndefined();
    });

    it("delivers the validated message with its topic, attempt 1 and final=false", async () => {
      const received: Delivery<"file.indexed">[] = [];
      await bus.subscribe(
        { group: group("indexer"), topics: ["file.indexed"], concurrency: 1, maxAttempts: 3 },
        (d) => {
          received.push(d);
          return Promise.resolve();
        },
      );
      const message = indexed();
      const before = Date.now();
      await bus.publish("file.indexed", message);
      const after = Date.now();
      await waitFor(() => received.length === 1, waitMs, "the delivery");
      expect(received[0]).toEqual({
        topic: "file.indexed",
        message,
        attempt: 1,
        final: false,
        publishedAt: expect.any(Number) as number,
        signal: expect.any(AbortSignal) as AbortSignal,
      });
      expect(received[0]?.signal?.aborted).toBe(false);
      // To the second at least (a broker's timestamp property is in seconds).
      const publishedAt = received[0]?.publishedAt ?? 0;
      expect(publishedAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
      expect(publishedAt).toBeLessThanOrEqual(after);
    });

    it("queueDepth counts the messages waiting in a group's queue, not the one being handled", async () => {
      const g = group("backlog");
      const hold = gate();
      let started = 0;
      await bus.subscribe(
        { group: g, topics: ["file.deleted"], concurrency: 1, maxAttempts: 1 },
        async () => {
          started += 1;
          await hold.promise;
        },
      );
      try {
        for (let i = 0; i < 3; i++) await bus.publish("file.deleted", deleted());
        await waitFor(() => started === 1, waitMs, "the first delivery");
        // A broker's count follows its queue a moment later.
        const deadline = Date.now() + waitMs;
        let depth = await bus.queueDepth(g);
        while (depth !== 2 && Date.now() < deadline) {
          await sleep(20);
          depth = await bus.queueDepth(g);
        }
        expect(depth).toBe(2);
      } finally {
        hold.open();
      }
      await waitFor(() => started === 3, waitMs, "every delivery");
    });

    it("publish does not run the handler inline and resolves without waiting for it", async () => {
      const hold = gate();
      let started = false;
      let finished = false;
      await bus.subscribe(
        { group: group("async"), topics: ["file.deleted"], concurrency: 1, maxAttempts: 1 },
        async () => {
          started = true;
          await hold.promise;
          finished = true;
        },
      );
      const published = bus.publish("file.deleted", deleted());
      expect(started).toBe(false);
      try {
        // The handler is held until publish resolves: a publish that waited for the handler would never resolve.
        await within(published, waitMs, "publish to resolve while its handler is still running");
        expect(finished).toBe(false);
      } finally {
        hold.open();
      }
      await waitFor(() => finished, waitMs, "the handler to finish");
    });

    it("every consumer group gets its own copy of each message, exactly once", async () => {
      const byGroup = new Map<string, string[]>();
      const groups = [group("files"), group("search"), group("audit")];
      for (const g of groups) {
        byGroup.set(g, []);
        await bus.subscribe({ group: g, topics: ["file.deleted"], concurrency: 2, maxAttempts: 3 }, (d) => {
          byGroup.get(g)!.push(d.message.fileId);
          return Promise.resolve();
        });
      }
      const messages = [deleted(), deleted(), deleted(), deleted()];
      for (const m of messages) await bus.publish("file.deleted", m);

      await waitFor(
        () => groups.every((g) => byGroup.get(g)!.length >= messages.length),
        waitMs,
        "every group to receive every message",
      );
      // Give any duplicate time to show up.
      await sleep(100);
      const expected = messages.map((m) => m.fileId).sort();
      for (const g of groups) expect([...byGroup.get(g)!].sort()).toEqual(expected);
    });

    it("a group receives only the topics it subscribed to", async () => {
      const topics: Topic[] = [];
      await bus.subscribe(
        {
          group: group("indexer"),
          topics: ["file.extracted", "file.deleted"],
          concurrency: 1,
          maxAttempts: 1,
        },
        (d) => {
          topics.push(d.topic);
          return Promise.resolve();
        },
      );
      await bus.publish("file.indexed", indexed());
      await bus.publish("file.deleted", deleted());
      await bus.publish("file.extracted", {
        fileId: randomUUID(),
        userId: randomUUID(),
        extractionKey: "extractions/u/f.jsonl",
        passageCount: 0,
        pageCount: null,
      });
      await waitFor(() => topics.length === 2, waitMs, "two deliveries");
      await sleep(100);
      expect([...topics].sort()).toEqual(["file.deleted", "file.extracted"]);
    });

    it("retries a failing handler, counting attempts, until it succeeds", async () => {
      const attempts: { attempt: number; final: boolean; fileId: string }[] = [];
      const published = new Set<number | undefined>();
      await bus.subscribe(
        { group: group("flaky"), topics: ["file.deleted"], concurrency: 1, maxAttempts: 5 },
        (d) => {
          attempts.push({ attempt: d.attempt, final: d.final, fileId: d.message.fileId });
          published.add(d.publishedAt);
          return d.attempt < 3 ? Promise.reject(new Error("transient failure")) : Promise.resolve();
        },
      );
      const message = deleted();
      await bus.publish("file.deleted", message);
      await waitFor(() => attempts.length === 3, waitMs, "three attempts");
      await sleep(150);
      expect(attempts).toEqual([
        { attempt: 1, final: false, fileId: message.fileId },
        { attempt: 2, final: false, fileId: message.fileId },
        { attempt: 3, final: false, fileId: message.fileId },
      ]);
      // A retry is the same message: it keeps the time it was first published.
      expect(published.size).toBe(1);
      expect(
        (await harness.deadLetters()).filter(
          (d) => (d.payload as { fileId?: string }).fileId === message.fileId,
        ),
      ).toEqual([]);
    });

    it("carries the publisher's headers to every delivery, retries included, but none named as the bus's own (x-)", async () => {
      const seen: (Readonly<Record<string, string>> | undefined)[] = [];
      await bus.subscribe(
        { group: group("traced"), topics: ["file.deleted"], concurrency: 1, maxAttempts: 3 },
        (d) => {
          seen.push(d.headers);
          return d.attempt < 2 ? Promise.reject(new Error("transient failure")) : Promise.resolve();
        },
      );
      const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
      await bus.publish("file.deleted", deleted(), {
        headers: { traceparent, tracestate: "locus=1", "x-locus-attempt": "7" },
      });
      await waitFor(() => seen.length === 2, waitMs, "two attempts");
      expect(seen).toEqual([
        { traceparent, tracestate: "locus=1" },
        { traceparent, tracestate: "locus=1" },
      ]);
    });

    it("marks the last attempt final and dead-letters the message when it fails too", async () => {
      const g = group("doomed");
      const attempts: { attempt: number; final: boolean }[] = [];
      await bus.subscribe({ group: g, topics: ["file.deleted"], concurrency: 1, maxAttempts: 3 }, (d) => {
        attempts.push({ attempt: d.attempt, final: d.final });
        return Promise.reject(new Error("permanent failure"));
      });
      const message = deleted();
      await bus.publish("file.deleted", message);

      const mine = async () =>
        (await harness.deadLetters()).filter(
          (d) => (d.payload as { fileId?: string }).fileId === message.fileId,
        );
      const deadline = Date.now() + waitMs;
      while ((await mine()).length === 0 && Date.now() < deadline) await sleep(10);

      expect(attempts).toEqual([
        { attempt: 1, final: false },
        { attempt: 2, final: false },
        { attempt: 3, final: true },
      ]);
      const letters = await mine();
      expect(letters).toHaveLength(1);
      expect(letters[0]).toMatchObject({ group: g, topic: "file.deleted", payload: message });
      // Dead is dead: no further attempts.
      await sleep(150);
      expect(attempts).toHaveLength(3);
    });

    it("with maxAttempts 1 the first delivery is final", async () => {
      const finals: boolean[] = [];
      await bus.subscribe(
        { group: group("once"), topics: ["file.deleted"], concurrency: 1, maxAttempts: 1 },
        (d) => {
          finals.push(d.final);
          return Promise.resolve();
        },
      );
      await bus.publish("file.deleted", deleted());
      await waitFor(() => finals.length === 1, waitMs, "the delivery");
      expect(finals).toEqual([true]);
    });

    it("a failing message does not hold up the others in its group", async () => {
      const done: string[] = [];
      const poison = deleted();
      await bus.subscribe(
        { group: group("mixed"), topics: ["file.deleted"], concurrency: 1, maxAttempts: 2 },
        (d) => {
          if (d.message.fileId === poison.fileId) return Promise.reject(new Error("poison"));
          done.push(d.message.fileId);
          return Promise.resolve();
        },
      );
      const good = [deleted(), deleted(), deleted()];
      await bus.publish("file.deleted", poison);
      for (const m of good) await bus.publish("file.deleted", m);
      await waitFor(() => done.length === good.length, waitMs, "the good messages");
      expect([...done].sort()).toEqual(good.map((m) => m.fileId).sort());
    });

    it("never runs more handlers at once than the subscription's concurrency", async () => {
      let inFlight = 0;
      let maxInFlight = 0;
      let handled = 0;
      await bus.subscribe(
        { group: group("bounded"), topics: ["file.deleted"], concurrency: 3, maxAttempts: 1 },
        async () => {
          inFlight += 1;
          maxInFlight = Math.max(maxInFlight, inFlight);
          await sleep(30);
          inFlight -= 1;
          handled += 1;
        },
      );
      for (let i = 0; i < 12; i++) await bus.publish("file.deleted", deleted());
      await waitFor(() => handled === 12, waitMs, "all twelve messages");
      expect(maxInFlight).toBeLessThanOrEqual(3);
      // The bound is used, not just respected: with twelve messages waiting, three run together.
      expect(maxInFlight).toBe(3);
    });

    it("concurrency 1 handles one message at a time", async () => {
      let inFlight = 0;
      let maxInFlight = 0;
      let handled = 0;
      await bus.subscribe(
        { group: group("serial"), topics: ["file.deleted"], concurrency: 1, maxAttempts: 1 },
        async () => {
          inFlight += 1;
          maxInFlight = Math.max(maxInFlight, inFlight);
          await sleep(10);
          inFlight -= 1;
          handled += 1;
        },
      );
      for (let i = 0; i < 6; i++) await bus.publish("file.deleted", deleted());
      await waitFor(() => handled === 6, waitMs, "six messages");
      expect(maxInFlight).toBe(1);
    });

    it("publish rejects a payload that does not match the topic's schema, and nothing is delivered", async () => {
      const received: unknown[] = [];
      await bus.subscribe(
        { group: group("strict"), topics: ["file.deleted", "file.indexed"], concurrency: 1, maxAttempts: 1 },
        (d) => {
          received.push(d.message);
          return Promise.resolve();
        },
      );
      const bad = [
        { fileId: "not-a-uuid", userId: randomUUID() },
        { fileId: randomUUID() },
      ] as unknown as MessageOf<"file.deleted">[];
      for (const message of bad) {
        await expect((async () => bus.publish("file.deleted", message))()).rejects.toThrow();
      }
      const negative = { ...indexed(), passageCount: -1 };
      await expect((async () => bus.publish("file.indexed", negative))()).rejects.toThrow();
      await sleep(100);
      expect(received).toEqual([]);
    });

    it("publish reports an invalid payload as a rejected promise, never a synchronous throw", async () => {
      const bad: MessageOf<"file.deleted"> = { fileId: "not-a-uuid", userId: "nor-this" };
      let result: Promise<void> | undefined;
      // Callers may chain .catch() or collect promises for Promise.all: a throw would escape both.
      expect(() => {
        result = bus.publish("file.deleted", bad);
      }).not.toThrow();
      await expect(result).rejects.toThrow();
    });

    it("close() waits for handlers in flight to finish", async () => {
      let started = false;
      let finished = false;
      await bus.subscribe(
        { group: group("slow"), topics: ["file.deleted"], concurrency: 1, maxAttempts: 1 },
        async () => {
          started = true;
          await sleep(200);
          finished = true;
        },
      );
      await bus.publish("file.deleted", deleted());
      await waitFor(() => started, waitMs, "the handler to start");
      expect(finished).toBe(false);
      await bus.close();
      expect(finished).toBe(true);
    });

    it("close() aborts the delivery's signal; a handler that stops on it is neither retried nor dead-lettered", async () => {
      const g = group("long");
      let attempts = 0;
      let stoppedAfterMs = -1;
      await bus.subscribe(
        { group: g, topics: ["file.deleted"], concurrency: 1, maxAttempts: 3 },
        async ({ signal }) => {
          attempts += 1;
          const started = Date.now();
          // Long work in steps, stopping between two when asked (as the encoder does between pages).
          for (let step = 0; step < 600; step++) {
            if (signal?.aborted) stoppedAfterMs = Date.now() - started;
            signal?.throwIfAborted();
            await sleep(100);
          }
        },
      );
      await bus.publish("file.deleted", deleted());
      await waitFor(() => attempts === 1, waitMs, "the handler to start");
      await within(bus.close(), waitMs, "close() to end the long handler");
      expect(stoppedAfterMs).toBeGreaterThanOrEqual(0);
      expect(attempts).toBe(1);
      expect((await harness.deadLetters()).filter((d) => d.group === g)).toEqual([]);
    });

    it("close() on an idle bus resolves", async () => {
      await bus.subscribe(
        { group: group("idle"), topics: ["file.deleted"], concurrency: 1, maxAttempts: 1 },
        () => Promise.resolve(),
      );
      await expect(bus.close()).resolves.toBeUndefined();
    });
  });
}
