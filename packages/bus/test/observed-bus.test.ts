import { createLogger } from "@locus/runtime";
import {
  InProcessBus,
  ObservedBus,
  type Bus,
  type DeliveryOutcome,
  type SubscribeOptions,
} from "../src/index.ts";

/** What the observed bus reports, around the in-process bus: publishes, and how deliveries end. */
describe("ObservedBus", () => {
  const logger = createLogger("test", "silent");
  const message = {
    fileId: "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
    userId: "3f2504e0-4f89-11d3-9a0c-0305e82c3302",
  };

  it("reports each publish, and each delivery handled, retried or dead-lettered, with its group", async () => {
    const inner = new InProcessBus(logger, 1);
    const published: string[] = [];
    const ended: { topic: string; group: string; outcome: DeliveryOutcome; seconds: number }[] = [];
    const ages: (number | undefined)[] = [];
    const bus = new ObservedBus(inner, {
      messagePublished: (topic) => published.push(topic),
      deliveryStarted: (_topic, _group, age) => ages.push(age),
      deliveryEnded: (topic, group, outcome, seconds) => ended.push({ topic, group, outcome, seconds }),
      deliveryAbandoned: () => undefined,
    });
    // Fails its first attempt at every message, and every attempt at a file.deleted.
    await bus.subscribe(
      { group: "g", topics: ["file.progress", "file.deleted"], concurrency: 1, maxAttempts: 2 },
      (delivery) =>
        delivery.topic === "file.deleted" || delivery.attempt === 1
          ? Promise.reject(new Error("not now"))
          : Promise.resolve(),
    );
    await bus.publish("file.progress", { ...message, progress: 0.5 });
    await inner.whenIdle();
    await bus.publish("file.deleted", message);
    await inner.whenIdle();
    await bus.close();

    expect(published).toEqual(["file.progress", "file.deleted"]);
    expect(ended.map(({ topic, group, outcome }) => `${topic} ${group} ${outcome}`)).toEqual([
      "file.progress g retried",
      "file.progress g handled",
      "file.deleted g retried",
      "file.deleted g dead_lettered",
    ]);
    for (const { seconds } of ended) expect(seconds).toBeGreaterThanOrEqual(0);
    // Each delivery's age since its message was first published: a retry's counts its wait too.
    expect(ages).toHaveLength(4);
    for (const age of ages) expect(age).toBeGreaterThanOrEqual(0);
    expect(ages[1]).toBeGreaterThanOrEqual(ages[0] ?? Infinity);
    expect(bus.subscribedGroups()).toEqual(["g"]);
    expect(inner.deadLetters.map((d) => d.topic)).toEqual(["file.deleted"]);
  });

  it("reports a delivery whose handler stopped for the close as handed back, not retried", async () => {
    const inner = new InProcessBus(logger, 1);
    const ended: DeliveryOutcome[] = [];
    const bus = new ObservedBus(inner, {
      messagePublished: () => undefined,
      deliveryStarted: () => undefined,
      deliveryEnded: (_topic, _group, outcome) => ended.push(outcome),
      deliveryAbandoned: () => undefined,
    });
    let started = false;
    await bus.subscribe(
      { group: "g", topics: ["file.deleted"], concurrency: 1, maxAttempts: 2 },
      async ({ signal }) => {
        started = true;
        while (!signal?.aborted) await new Promise((r) => setTimeout(r, 5));
        signal.throwIfAborted();
      },
    );
    await bus.publish("file.deleted", message);
    while (!started) await new Promise((r) => setTimeout(r, 5));
    await bus.close();
    expect(ended).toEqual(["handed_back"]);
    expect(inner.deadLetters).toEqual([]);
  });

  it("reports no publish the bus refused", async () => {
    const inner = new InProcessBus(logger);
    const published: string[] = [];
    const bus = new ObservedBus(inner, {
      messagePublished: (topic) => published.push(topic),
      deliveryStarted: () => undefined,
      deliveryEnded: () => undefined,
      deliveryAbandoned: () => undefined,
    });
    await bus.close();
    await expect(bus.publish("file.deleted", message)).rejects.toThrow(/closed/);
    expect(published).toEqual([]);
  });

  it("counts a message the adapter abandons as dead-lettered, after the subscriber's own hook", async () => {
    // An adapter that only remembers what it was asked to subscribe (abandoning is RabbitMQ's; its
    // contract suite runs it for real).
    let given: SubscribeOptions<"file.deleted"> | undefined;
    const inner = {
      subscribe: (options: SubscribeOptions<"file.deleted">) => {
        given = options;
        return Promise.resolve();
      },
    } as unknown as Bus;
    const events: string[] = [];
    const bus = new ObservedBus(inner, {
      messagePublished: () => undefined,
      deliveryStarted: () => undefined,
      deliveryEnded: () => undefined,
      deliveryAbandoned: (topic, group) => events.push(`counted ${topic} ${group}`),
    });
    const delivery = { topic: "file.deleted" as const, message, attempt: 1, final: false };
    await bus.subscribe(
      {
        group: "g",
        topics: ["file.deleted"],
        concurrency: 1,
        maxAttempts: 3,
        abandon: (_delivery, reason) => {
          events.push(`hook ${reason}`);
          return Promise.resolve();
        },
      },
      () => Promise.resolve(),
    );
    await given?.abandon?.(delivery, "abandoned: delivered 6 times");
    expect(events).toEqual(["hook abandoned: delivered 6 times", "counted file.deleted g"]);

    // A subscriber without a hook is counted all the same: the adapter dead-letters it regardless.
    events.length = 0;
    await bus.subscribe({ group: "h", topics: ["file.deleted"], concurrency: 1, maxAttempts: 3 }, () =>
      Promise.resolve(),
    );
    await given?.abandon?.(delivery, "abandoned");
    expect(events).toEqual(["counted file.deleted h"]);
  });
});
