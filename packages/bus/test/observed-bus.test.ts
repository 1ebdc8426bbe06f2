import { createLogger } from "@locus/runtime";
import { InProcessBus, ObservedBus, type DeliveryOutcome } from "../src/index.ts";

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

  it("reports no publish the bus refused", async () => {
    const inner = new InProcessBus(logger);
    const published: string[] = [];
    const bus = new ObservedBus(inner, {
      messagePublished: (topic) => published.push(topic),
      deliveryStarted: () => undefined,
      deliveryEnded: () => undefined,
    });
    await bus.close();
    await expect(bus.publish("file.deleted", message)).rejects.toThrow(/closed/);
    expect(published).toEqual([]);
  });
});
