import { randomUUID } from "node:crypto";
import type { MessageOf } from "@locus/contracts";
import { createLogger } from "@locus/runtime";
import { InProcessBus } from "../src/in-process-bus.ts";
import { busContract } from "./bus.contract.ts";

const logger = createLogger("test", "silent");
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const deleted = (): MessageOf<"file.deleted"> => ({ fileId: randomUUID(), userId: randomUUID() });

busContract("in-process", () => {
  const bus = new InProcessBus(logger, 5);
  return Promise.resolve({
    bus,
    deadLetters: () => Promise.resolve([...bus.deadLetters]),
    cleanup: () => bus.close(),
  });
});

describe("InProcessBus", () => {
  let bus: InProcessBus;

  afterEach(async () => {
    await bus.close();
  });

  it("publish resolves before the handler has started", async () => {
    bus = new InProcessBus(logger, 5);
    let started = false;
    await bus.subscribe({ group: "g", topics: ["file.deleted"], concurrency: 1, maxAttempts: 1 }, () => {
      started = true;
      return Promise.resolve();
    });
    await bus.publish("file.deleted", deleted());
    expect(started).toBe(false);
    await bus.whenIdle();
    expect(started).toBe(true);
  });

  it("whenIdle resolves once every message has been handled, retries included", async () => {
    bus = new InProcessBus(logger, 5);
    let successes = 0;
    await bus.subscribe({ group: "g", topics: ["file.deleted"], concurrency: 2, maxAttempts: 3 }, (d) => {
      if (d.attempt === 1) return Promise.reject(new Error("first try fails"));
      successes += 1;
      return Promise.resolve();
    });
    for (let i = 0; i < 4; i++) await bus.publish("file.deleted", deleted());
    await bus.whenIdle();
    expect(successes).toBe(4);
    expect(bus.deadLetters).toEqual([]);
  });

  it("backs off exponentially from retryBaseMs between attempts", async () => {
    bus = new InProcessBus(logger, 40);
    const times: number[] = [];
    await bus.subscribe({ group: "g", topics: ["file.deleted"], concurrency: 1, maxAttempts: 3 }, () => {
      times.push(performance.now());
      return Promise.reject(new Error("always"));
    });
    await bus.publish("file.deleted", deleted());
    await bus.whenIdle();
    expect(times).toHaveLength(3);
    // Timers may fire a millisecond early; the second wait must be about twice the first.
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(38);
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(78);
  });

  it("records why a message was dead-lettered", async () => {
    bus = new InProcessBus(logger, 5);
    await bus.subscribe({ group: "indexer", topics: ["file.deleted"], concurrency: 1, maxAttempts: 2 }, () =>
      Promise.reject(new Error("index unavailable")),
    );
    const message = deleted();
    await bus.publish("file.deleted", message);
    await bus.whenIdle();
    expect(bus.deadLetters).toEqual([
      {
        group: "indexer",
        topic: "file.deleted",
        payload: message,
        reason: "index unavailable",
        at: expect.any(String),
      },
    ]);
  });

  it("keeps only the most recent 1000 dead letters", async () => {
    bus = new InProcessBus(logger, 5);
    await bus.subscribe({ group: "g", topics: ["file.deleted"], concurrency: 50, maxAttempts: 1 }, () =>
      Promise.reject(new Error("no")),
    );
    const messages = Array.from({ length: 1005 }, deleted);
    for (const m of messages) await bus.publish("file.deleted", m);
    await bus.whenIdle();
    expect(bus.deadLetters).toHaveLength(1000);
    const kept = new Set(bus.deadLetters.map((d) => (d.payload as { fileId: string }).fileId));
    expect(kept.has(messages.at(-1)!.fileId)).toBe(true);
  });

  it("each group gets its own copy: a handler changing its message does not affect another group or the publisher", async () => {
    bus = new InProcessBus(logger, 5);
    const seenByB: string[] = [];
    await bus.subscribe({ group: "a", topics: ["file.deleted"], concurrency: 1, maxAttempts: 1 }, (d) => {
      d.message.fileId = "tampered";
      return Promise.resolve();
    });
    await bus.subscribe(
      { group: "b", topics: ["file.deleted"], concurrency: 1, maxAttempts: 1 },
      async (d) => {
        await sleep(20);
        seenByB.push(d.message.fileId);
      },
    );
    const message = deleted();
    const original = message.fileId;
    await bus.publish("file.deleted", message);
    message.userId = "changed after publish";
    await bus.whenIdle();
    expect(seenByB).toEqual([original]);
    expect(message.fileId).toBe(original);
  });

  it("refuses a second subscription for the same consumer group", async () => {
    bus = new InProcessBus(logger, 5);
    const options = { group: "files", topics: ["file.deleted" as const], concurrency: 1, maxAttempts: 1 };
    await bus.subscribe(options, () => Promise.resolve());
    await expect(bus.subscribe(options, () => Promise.resolve())).rejects.toThrow(/already subscribed/);
  });

  it("after close(), publish and check reject", async () => {
    bus = new InProcessBus(logger, 5);
    await bus.close();
    await expect(bus.publish("file.deleted", deleted())).rejects.toThrow(/closed/);
    await expect(bus.check()).rejects.toThrow(/closed/);
  });

  it("close() does not wait out a pending retry's back-off", async () => {
    bus = new InProcessBus(logger, 60_000);
    let attempts = 0;
    await bus.subscribe({ group: "g", topics: ["file.deleted"], concurrency: 1, maxAttempts: 5 }, () => {
      attempts += 1;
      return Promise.reject(new Error("fails"));
    });
    await bus.publish("file.deleted", deleted());
    while (attempts === 0) await sleep(5);
    await sleep(10);
    const started = Date.now();
    await bus.close();
    // Far below the minute of back-off it must not wait out, with room for a busy CI.
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(attempts).toBe(1);
  });

  it("a handler that fails while the bus is closing is dead-lettered, not retried", async () => {
    bus = new InProcessBus(logger, 5);
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let attempts = 0;
    await bus.subscribe(
      { group: "g", topics: ["file.deleted"], concurrency: 1, maxAttempts: 5 },
      async () => {
        attempts += 1;
        await held;
        throw new Error("failed during shutdown");
      },
    );
    await bus.publish("file.deleted", deleted());
    while (attempts === 0) await sleep(5);
    const closing = bus.close();
    release();
    await closing;
    expect(attempts).toBe(1);
    expect(bus.deadLetters.map((d) => d.reason)).toEqual(["failed during shutdown"]);
  });
});
