import { execFile, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { MessageOf, Topic } from "@locus/contracts";
import { createLogger } from "@locus/runtime";
import amqp from "amqplib";
import type { ChannelModel, GetMessage } from "amqplib";
import type { Bus, Delivery, Handler, PublishOptions, SubscribeOptions } from "../src/bus.ts";
import {
  AttemptHeader,
  GroupHeader,
  RabbitMqBus,
  ReasonHeader,
  groupQueues,
  type RabbitMqBusOptions,
} from "../src/rabbitmq-bus.ts";
import { quorumQueueArguments } from "../src/rabbitmq-topology.ts";
import { busContract, type DeadLetterView } from "./bus.contract.ts";

// Real RabbitMQ, never a mock: CI starts it, and a missing broker fails this file loudly.
const AMQP_URL = process.env.AMQP_URL ?? "amqp://guest:guest@127.0.0.1:5672";
const logger = createLogger("test", process.env.BUS_TEST_LOG ?? "silent");
const run = promisify(execFile);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const deleted = (): MessageOf<"file.deleted"> => ({ fileId: randomUUID(), userId: randomUUID() });
const newPrefix = () => `test-${randomUUID().slice(0, 8)}.`;

let admin: ChannelModel;

beforeAll(async () => {
  try {
    admin = await amqp.connect(AMQP_URL, { timeout: 5_000 });
  } catch (err) {
    throw new Error(
      `RabbitMQ is not reachable at ${AMQP_URL.replace(/\/\/([^:@/]+):[^@/]*@/, "//$1:***@")} ` +
        `(${err instanceof Error ? err.message : String(err)}). These tests need a real broker: ` +
        "CI starts one; locally run `rabbitmq-server -detached` or set AMQP_URL.",
    );
  }
});

afterAll(async () => {
  await admin?.close();
});

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

/** Every message in a queue, left in it: read without ack, then handed back by closing the channel. */
async function peek(queue: string): Promise<GetMessage[]> {
  const channel = await admin.createChannel();
  channel.on("error", () => undefined);
  const messages: GetMessage[] = [];
  try {
    for (;;) {
      const message = await channel.get(queue, { noAck: false });
      if (!message) break;
      messages.push(message);
    }
  } catch {
    // The queue does not exist (yet): nothing in it.
    return [];
  }
  await channel.close();
  return messages;
}

async function removeTopology(prefix: string, groups: Iterable<string>): Promise<void> {
  const channel = await admin.createChannel();
  for (const group of groups) {
    const { queue, retry, dead } = groupQueues(group, prefix);
    for (const name of [queue, retry, dead]) await channel.deleteQueue(name);
  }
  await channel.deleteExchange(`${prefix}locus`);
  await channel.close();
}

/** Remembers the groups a test subscribes, so the harness can read their dead letters and delete them. */
class TrackedBus implements Bus {
  readonly groups = new Set<string>();
  constructor(readonly inner: RabbitMqBus) {}
  publish<T extends Topic>(topic: T, message: MessageOf<T>, options?: PublishOptions): Promise<void> {
    return this.inner.publish(topic, message, options);
  }
  subscribe<T extends Topic>(options: SubscribeOptions<T>, handler: Handler<T>): Promise<void> {
    this.groups.add(options.group);
    return this.inner.subscribe(options, handler);
  }
  check(): Promise<void> {
    return this.inner.check();
  }
  queueDepth(group: string): Promise<number> {
    return this.inner.queueDepth(group);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

function newBus(prefix: string, options: Partial<RabbitMqBusOptions> = {}): RabbitMqBus {
  return new RabbitMqBus({
    url: AMQP_URL,
    logger,
    prefix,
    retryBaseMs: 20,
    operationTimeoutMs: 5_000,
    reconnectBaseMs: 100,
    connectionName: `locus-test ${prefix}`,
    ...options,
  });
}

busContract(`RabbitMQ at ${AMQP_URL.replace(/\/\/[^@/]*@/, "//")}`, async () => {
  const prefix = newPrefix();
  const inner = newBus(prefix);
  await inner.connect();
  const bus = new TrackedBus(inner);
  return {
    bus,
    deadLetters: async () => {
      const letters: DeadLetterView[] = [];
      for (const group of bus.groups) {
        for (const m of await peek(groupQueues(group, prefix).dead)) {
          letters.push({
            group: String(m.properties.headers?.[GroupHeader]),
            topic: m.properties.type as Topic,
            payload: JSON.parse(m.content.toString("utf8")),
          });
        }
      }
      return letters;
    },
    cleanup: async () => {
      await bus.close();
      await removeTopology(prefix, bus.groups);
    },
  };
});

describe("RabbitMqBus on the broker", () => {
  let prefix: string;
  const groups = new Set<string>();
  const buses: RabbitMqBus[] = [];
  const make = (options: Partial<RabbitMqBusOptions> = {}) => {
    const bus = newBus(prefix, options);
    buses.push(bus);
    return bus;
  };
  const group = (label: string) => {
    const g = `${label}-${randomUUID().slice(0, 8)}`;
    groups.add(g);
    return g;
  };

  beforeEach(() => {
    prefix = newPrefix();
  });

  afterEach(async () => {
    for (const bus of buses.splice(0)) await bus.close();
    await removeTopology(prefix, groups);
    groups.clear();
  });

  it("publishes persistent JSON messages with an id, and keeps them while the group has no consumer", async () => {
    const g = group("files");
    const first = make();
    await first.subscribe({ group: g, topics: ["file.deleted"], concurrency: 1, maxAttempts: 3 }, () =>
      Promise.resolve(),
    );
    await first.close();

    const publisher = make();
    const messages = [deleted(), deleted(), deleted()];
    for (const m of messages) await publisher.publish("file.deleted", m);

    const queued = await peek(groupQueues(g, prefix).queue);
    expect(queued).toHaveLength(3);
    for (const m of queued) {
      expect(m.properties.deliveryMode).toBe(2);
      expect(m.properties.contentType).toBe("application/json");
      expect(m.properties.type).toBe("file.deleted");
      expect(m.properties.messageId).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(new Set(queued.map((m) => m.properties.messageId as string)).size).toBe(3);

    const received: string[] = [];
    const later = make();
    await later.subscribe({ group: g, topics: ["file.deleted"], concurrency: 2, maxAttempts: 3 }, (d) => {
      received.push(d.message.fileId);
      return Promise.resolve();
    });
    await waitFor(() => received.length === 3, 5_000, "the messages published while nobody consumed");
    expect([...received].sort()).toEqual(messages.map((m) => m.fileId).sort());
  });

  it("keeps messages for a declared group that has never had a consumer", async () => {
    const g = group("extractor");
    const publisher = make();
    await publisher.declareGroups({ [g]: ["file.deleted"] });
    const messages = [deleted(), deleted()];
    for (const m of messages) await publisher.publish("file.deleted", m);

    const received: string[] = [];
    const worker = make();
    await worker.subscribe({ group: g, topics: ["file.deleted"], concurrency: 1, maxAttempts: 3 }, (d) => {
      received.push(d.message.fileId);
      return Promise.resolve();
    });
    await waitFor(() => received.length === 2, 5_000, "the messages published before the first consumer");
    expect([...received].sort()).toEqual(messages.map((m) => m.fileId).sort());
  });

  it("dead-letters into <group>.dead with the reason, the group and the attempt", async () => {
    const g = group("indexer");
    const bus = make();
    let calls = 0;
    await bus.subscribe({ group: g, topics: ["file.deleted"], concurrency: 1, maxAttempts: 2 }, () => {
      calls += 1;
      return Promise.reject(new Error("index unavailable"));
    });
    const message = deleted();
    await bus.publish("file.deleted", message);

    const dead = groupQueues(g, prefix).dead;
    await waitFor(async () => (await peek(dead)).length === 1, 5_000, "the dead letter");
    const [letter] = await peek(dead);
    expect(JSON.parse(letter!.content.toString("utf8"))).toEqual(message);
    expect(letter!.properties).toMatchObject({
      type: "file.deleted",
      deliveryMode: 2,
      contentType: "application/json",
    });
    expect(letter!.properties.headers).toMatchObject({
      [ReasonHeader]: "index unavailable",
      [GroupHeader]: g,
      [AttemptHeader]: 2,
    });
    expect(calls).toBe(2);
  });

  it("lists a group's dead letters without taking them, and replays them as new to the group", async () => {
    const g = group("replayed");
    const bus = make();
    let failing = true;
    const handled: { fileId: string; attempt: number }[] = [];
    await bus.subscribe({ group: g, topics: ["file.deleted"], concurrency: 1, maxAttempts: 2 }, (d) => {
      if (failing) return Promise.reject(new Error("store down"));
      handled.push({ fileId: d.message.fileId, attempt: d.attempt });
      return Promise.resolve();
    });
    const messages = [deleted(), deleted(), deleted()];
    for (const m of messages) await bus.publish("file.deleted", m);
    const dead = groupQueues(g, prefix).dead;
    await waitFor(async () => (await peek(dead)).length === 3, 10_000, "three dead letters");

    const operator = make();
    const listed = await operator.deadLetters(g, 2);
    expect(listed.map((l) => (l.payload as { fileId: string }).fileId)).toEqual(
      messages.slice(0, 2).map((m) => m.fileId),
    );
    expect(listed[0]).toMatchObject({ group: g, topic: "file.deleted", attempt: 2, reason: "store down" });
    expect(listed[0]?.publishedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    // Reading took nothing, and kept the order.
    expect((await operator.deadLetters(g, 10)).map((l) => (l.payload as { fileId: string }).fileId)).toEqual(
      messages.map((m) => m.fileId),
    );

    failing = false;
    const replayed = await operator.replayDeadLetters(g, 10);
    expect(replayed).toHaveLength(3);
    await waitFor(() => handled.length === 3, 5_000, "the replayed messages");
    // Each comes back as new: its first attempt again, once.
    expect(handled.map((h) => h.attempt)).toEqual([1, 1, 1]);
    expect(handled.map((h) => h.fileId).sort()).toEqual(messages.map((m) => m.fileId).sort());
    expect(await operator.deadLetters(g, 10)).toEqual([]);
  });

  it("dead-letters a message that fails validation without running the handler", async () => {
    const g = group("strict");
    const bus = make();
    const handled: string[] = [];
    await bus.subscribe({ group: g, topics: ["file.deleted"], concurrency: 1, maxAttempts: 5 }, (d) => {
      handled.push(d.message.fileId);
      return Promise.resolve();
    });
    // Another publisher, not going through the schema: what a buggy or older service might send.
    const raw = await admin.createConfirmChannel();
    raw.publish(`${prefix}locus`, "file.deleted", Buffer.from(JSON.stringify({ fileId: "nope" })), {
      type: "file.deleted",
      persistent: true,
    });
    raw.publish(`${prefix}locus`, "file.deleted", Buffer.from("{not json"), { persistent: true });
    await raw.waitForConfirms();
    await raw.close();
    const good = deleted();
    await bus.publish("file.deleted", good);

    const dead = groupQueues(g, prefix).dead;
    await waitFor(async () => (await peek(dead)).length === 2, 5_000, "two dead letters");
    const reasons = (await peek(dead)).map((m) => String(m.properties.headers?.[ReasonHeader]));
    expect(reasons).toEqual([
      expect.stringMatching(/^invalid message: .*fileId/s),
      "invalid message: not JSON",
    ]);
    await waitFor(() => handled.length === 1, 5_000, "the valid message");
    expect(handled).toEqual([good.fileId]);
  });

  it("retries through <group>.retry with exponential back-off, counting attempts in a header", async () => {
    const g = group("flaky");
    const bus = make({ retryBaseMs: 600 });
    const seen: { attempt: number; at: number }[] = [];
    await bus.subscribe({ group: g, topics: ["file.deleted"], concurrency: 1, maxAttempts: 4 }, (d) => {
      seen.push({ attempt: d.attempt, at: performance.now() });
      return d.attempt < 3 ? Promise.reject(new Error("not yet")) : Promise.resolve();
    });
    await bus.publish("file.deleted", deleted());

    // While it waits out its first back-off, the message sits in the retry queue, stamped for attempt 2.
    const retry = groupQueues(g, prefix).retry;
    await waitFor(async () => (await peek(retry)).length === 1, 2_000, "the message in the retry queue");
    const [waiting] = await peek(retry);
    expect(waiting!.properties.headers?.[AttemptHeader]).toBe(2);
    expect(waiting!.properties.expiration).toBe("600");

    await waitFor(() => seen.length === 3, 10_000, "three attempts");
    expect(seen.map((s) => s.attempt)).toEqual([1, 2, 3]);
    // The broker expires messages on its own clock: allow it a little slack below the TTL.
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(550);
    expect(seen[2]!.at - seen[1]!.at).toBeGreaterThanOrEqual(1_150);
    expect(await peek(groupQueues(g, prefix).dead)).toEqual([]);
  });

  it("gives a message whose handler stopped for the close to the next worker, as the same attempt, once", async () => {
    const g = group("encoder");
    const stopping = make();
    let started = 0;
    await stopping.subscribe(
      { group: g, topics: ["file.deleted"], concurrency: 1, maxAttempts: 3 },
      async ({ signal }) => {
        started += 1;
        while (!signal?.aborted) await sleep(20);
        signal.throwIfAborted();
      },
    );
    const message = deleted();
    await make().publish("file.deleted", message);
    await waitFor(() => started === 1, 5_000, "the handler to start");
    await stopping.close();

    const next = make();
    const received: Delivery<"file.deleted">[] = [];
    await next.subscribe({ group: g, topics: ["file.deleted"], concurrency: 1, maxAttempts: 3 }, (d) => {
      received.push(d);
      return Promise.resolve();
    });
    await waitFor(() => received.length === 1, 5_000, "the message handed back");
    // Not a failure (attempt 1), and one message, not a copy beside the original.
    expect(received[0]).toMatchObject({ message, attempt: 1, redelivered: true });
    await sleep(500);
    expect(received).toHaveLength(1);
    expect(await peek(groupQueues(g, prefix).dead)).toEqual([]);
  });

  it("hands a message to another instance when the process handling it dies before acking", async () => {
    const g = group("pdf");
    const script = fileURLToPath(new URL("./fixtures/dying-consumer.ts", import.meta.url));
    const root = fileURLToPath(new URL("../../..", import.meta.url));
    const child = spawn(process.execPath, ["--import", "tsx", script, AMQP_URL, prefix, g], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    let errors = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (errors += chunk.toString()));
    const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
    try {
      await waitFor(
        () => output.includes("ready") || child.exitCode !== null,
        20_000,
        "the worker to subscribe",
      );
      expect(errors).toBe("");
      const message = deleted();
      await make().publish("file.deleted", message);
      await waitFor(() => output.includes(`handling ${message.fileId}`), 5_000, "the worker to take it");

      const survivor = make();
      const received: Delivery<"file.deleted">[] = [];
      await survivor.subscribe(
        { group: g, topics: ["file.deleted"], concurrency: 1, maxAttempts: 3 },
        (d) => {
          received.push(d);
          return Promise.resolve();
        },
      );
      // The message is unacked, held by the worker: nobody else gets it while that worker lives.
      await sleep(300);
      expect(received).toEqual([]);

      child.kill("SIGKILL");
      await exited;
      await waitFor(() => received.length === 1, 5_000, "the redelivery");
      // A crash is not a failed attempt (the handler never reported one), but the handler is told
      // the message came again: its first delivery may have done part of the work.
      expect(received[0]).toEqual({
        topic: "file.deleted",
        message,
        attempt: 1,
        final: false,
        redelivered: true,
        publishedAt: expect.any(Number) as number,
        signal: expect.any(AbortSignal) as AbortSignal,
      });
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("reconnects after the broker drops the connection, resumes consuming, and publishes wait for it", async () => {
    const g = group("resilient");
    const name = `locus-test-${randomUUID()}`;
    // A slower first reconnection, so the test can publish while the bus is certainly offline.
    const bus = make({ connectionName: name, reconnectBaseMs: 800 });
    const received: string[] = [];
    const held = deleted();
    let releaseHeld: () => void = () => undefined;
    const heldGate = new Promise<void>((resolve) => (releaseHeld = resolve));
    let heldRuns = 0;
    await bus.subscribe({ group: g, topics: ["file.deleted"], concurrency: 2, maxAttempts: 3 }, async (d) => {
      if (d.message.fileId === held.fileId) {
        heldRuns += 1;
        if (heldRuns === 1) await heldGate;
      }
      received.push(d.message.fileId);
    });
    const before = deleted();
    await bus.publish("file.deleted", before);
    await bus.publish("file.deleted", held);
    await waitFor(() => received.includes(before.fileId) && heldRuns === 1, 5_000, "the first deliveries");

    const pidBefore = await connectionPid(name);
    await run("rabbitmqctl", ["close_connection", pidBefore, "test: broker dropped the connection"]);
    await waitFor(
      () =>
        bus.check().then(
          () => false,
          () => true,
        ),
      5_000,
      "the bus to notice the drop",
    );

    // Published while offline: waits for the reconnection instead of failing.
    const during = deleted();
    const publishing = bus.publish("file.deleted", during);
    // The handler that was running when the connection dropped finishes; its ack has nowhere to go.
    releaseHeld();
    await publishing;
    await expect(bus.check()).resolves.toBeUndefined();
    expect(await connectionPid(name)).not.toBe(pidBefore);

    const after = deleted();
    await bus.publish("file.deleted", after);
    await waitFor(
      () => received.includes(during.fileId) && received.includes(after.fileId) && heldRuns === 2,
      5_000,
      "deliveries after reconnecting, and the unacked one again",
    );
    await sleep(200);
    // Acked ones once; the one unacked at the drop is the at-least-once redelivery.
    expect(received.filter((id) => id === before.fileId)).toHaveLength(1);
    expect(received.filter((id) => id === during.fileId)).toHaveLength(1);
    expect(received.filter((id) => id === after.fileId)).toHaveLength(1);
    expect(received.filter((id) => id === held.fileId)).toHaveLength(2);
    expect(await peek(groupQueues(g, prefix).queue)).toEqual([]);
  });

  it("rejects a publish with a clear error when the broker stays unreachable", async () => {
    const bus = make({ url: "amqp://guest:guest@127.0.0.1:1", operationTimeoutMs: 400, reconnectBaseMs: 50 });
    const started = Date.now();
    await expect(bus.publish("file.deleted", deleted())).rejects.toThrow(
      /RabbitMQ at amqp:\/\/guest:\*\*\*@127\.0\.0\.1:1 is unavailable: not connected within 400 ms \(last error: .*ECONNREFUSED/,
    );
    // Given up at its 400 ms timeout, not after retrying on: a bound generous enough for a busy
    // 2-core CI, which still catches a publish that waits out back-offs or the test's timeout.
    expect(Date.now() - started).toBeLessThan(15_000);
    await expect(bus.check()).rejects.toThrow(/unavailable/);
    await expect(bus.connect()).rejects.toThrow(/unavailable/);
    // Validation does not wait for the broker: with a minute to connect, a malformed message is
    // refused first (the validation error, not the broker's, and long before that minute).
    const patient = make({ url: "amqp://guest:guest@127.0.0.1:1", operationTimeoutMs: 60_000 });
    const validating = Date.now();
    await expect(patient.publish("file.deleted", { fileId: "x", userId: "y" })).rejects.toThrow(/uuid/i);
    expect(Date.now() - validating).toBeLessThan(30_000);
  });

  /** Takes the group's next message and closes the channel unanswered, as a worker that crashed would. */
  async function leaveUnanswered(queue: string): Promise<GetMessage> {
    const channel = await admin.createChannel();
    let message: GetMessage | false = false;
    await waitFor(
      async () => (message = await channel.get(queue, { noAck: false })) !== false,
      5_000,
      `a message in ${queue}`,
    );
    await channel.close();
    return message as unknown as GetMessage;
  }

  it("gives up on a message whose deliveries keep ending unanswered: abandon hears why, the handler never runs again, and it is dead-lettered", async () => {
    const g = group("crashing");
    const publisher = make({ workQueue: { deliveryLimit: 3 } });
    await publisher.declareGroups({ [g]: ["file.deleted"] });
    const message = deleted();
    await publisher.publish("file.deleted", message);
    const { queue, dead } = groupQueues(g, prefix);
    // A quorum queue counts the deliveries that ended without an answer, and says so.
    for (let crashed = 0; crashed < 3; crashed++) {
      const taken = await leaveUnanswered(queue);
      expect(taken.properties.headers?.["x-delivery-count"] ?? 0).toBe(crashed);
    }

    const handled: string[] = [];
    const abandoned: { delivery: Delivery<"file.deleted">; reason: string }[] = [];
    const worker = make({ workQueue: { deliveryLimit: 3 } });
    await worker.subscribe(
      {
        group: g,
        topics: ["file.deleted"],
        concurrency: 1,
        maxAttempts: 3,
        abandon: (delivery, reason) => {
          abandoned.push({ delivery, reason });
          return Promise.resolve();
        },
      },
      (d) => {
        handled.push(d.message.fileId);
        return Promise.resolve();
      },
    );
    await waitFor(async () => (await peek(dead)).length === 1, 5_000, "the dead letter");
    expect(handled).toEqual([]);
    expect(abandoned).toHaveLength(1);
    expect(abandoned[0]!.delivery).toMatchObject({ topic: "file.deleted", message, attempt: 1 });
    expect(abandoned[0]!.reason).toMatch(
      /^abandoned: delivered 4 times, the first 3 ending without an answer/,
    );
    const [letter] = await worker.deadLetters(g, 10);
    expect(letter).toMatchObject({ group: g, topic: "file.deleted", payload: message });
    expect(letter!.reason).toBe(abandoned[0]!.reason);
    // Below the limit nothing changes: the next message is handled.
    const next = deleted();
    await publisher.publish("file.deleted", next);
    await waitFor(() => handled.length === 1, 5_000, "the next message");
    expect(handled).toEqual([next.fileId]);
  });

  it("tells a handler when a message comes again after a delivery that ended unanswered", async () => {
    const g = group("redelivered");
    const publisher = make();
    await publisher.declareGroups({ [g]: ["file.deleted"] });
    const crashedOn = deleted();
    await publisher.publish("file.deleted", crashedOn);
    await leaveUnanswered(groupQueues(g, prefix).queue);
    const fresh = deleted();
    await publisher.publish("file.deleted", fresh);

    const seen: Delivery<"file.deleted">[] = [];
    const worker = make();
    await worker.subscribe({ group: g, topics: ["file.deleted"], concurrency: 1, maxAttempts: 3 }, (d) => {
      seen.push(d);
      return Promise.resolve();
    });
    await waitFor(() => seen.length === 2, 5_000, "both messages");
    const byId = new Map(seen.map((d) => [d.message.fileId, d]));
    expect(byId.get(crashedOn.fileId)).toMatchObject({ attempt: 1, redelivered: true });
    expect(byId.get(fresh.fileId)?.redelivered).toBeUndefined();
  });

  it("dead-letters through the broker's own limit when even abandoning cannot be done", async () => {
    const g = group("stuck");
    const publisher = make({ workQueue: { deliveryLimit: 1 } });
    await publisher.declareGroups({ [g]: ["file.deleted"] });
    const message = deleted();
    await publisher.publish("file.deleted", message);
    const { queue, dead } = groupQueues(g, prefix);
    await leaveUnanswered(queue);

    let tries = 0;
    const worker = make({ workQueue: { deliveryLimit: 1 } });
    await worker.subscribe(
      {
        group: g,
        topics: ["file.deleted"],
        concurrency: 1,
        maxAttempts: 3,
        abandon: () => {
          tries += 1;
          return Promise.reject(new Error("the bus to fail the file is down too"));
        },
      },
      () => Promise.reject(new Error("never reached")),
    );
    // Abandoning fails and the delivery is requeued unanswered; the broker allows one more
    // unanswered delivery than Locus's limit, then dead-letters the message itself.
    await waitFor(async () => (await peek(dead)).length === 1, 5_000, "the broker's dead letter");
    expect(tries).toBe(2);
    const [letter] = await worker.deadLetters(g, 10);
    expect(letter).toMatchObject({ topic: "file.deleted", payload: message });
    expect(letter!.reason).toMatch(/delivery limit/);
  });

  it("declares each work queue as a quorum queue with the delivery limit, dead letters and consumer timeout asked", async () => {
    const g = group("declared");
    const settings = { type: "quorum" as const, deliveryLimit: 4, consumerTimeoutMs: 11_100_000 };
    await make({ workQueue: settings }).declareGroups({ [g]: ["file.deleted"] });
    const queues = groupQueues(g, prefix);
    // A declaration is accepted only when it says exactly what the queue has (406 otherwise).
    const declare = async (args: Record<string, unknown>) => {
      const channel = await admin.createChannel();
      channel.on("error", () => undefined);
      try {
        await channel.assertQueue(queues.queue, { durable: true, arguments: args });
        return "same";
      } catch (err) {
        return (err as { code?: number }).code === 406 ? "different" : String(err);
      } finally {
        await channel.close().catch(() => undefined);
      }
    };
    const args = quorumQueueArguments(queues, settings);
    expect(args).toMatchObject({
      "x-queue-type": "quorum",
      "x-delivery-limit": 5,
      "x-dead-letter-routing-key": queues.dead,
      "x-consumer-timeout": 11_100_000,
    });
    expect(await declare(args)).toBe("same");
    // (RabbitMQ 3.10 holds x-consumer-timeout without comparing it: only the delivery limit can tell.)
    expect(await declare({ ...args, "x-delivery-limit": 6 })).toBe("different");
  });

  it("uses a classic queue left by an older Locus as it is, and migrates it to quorum keeping every message", async () => {
    const g = group("legacy");
    const { queue } = groupQueues(g, prefix);
    const exchange = `${prefix}locus`;
    // What Locus declared before quorum queues.
    const channel = await admin.createConfirmChannel();
    await channel.assertExchange(exchange, "topic", { durable: true });
    await channel.assertQueue(queue, { durable: true });
    await channel.bindQueue(queue, exchange, "file.deleted");
    await channel.close();

    const warnings: string[] = [];
    const watched = createLogger("test", "warn");
    const warn = watched.warn.bind(watched);
    watched.warn = (fields: unknown, message?: string) => {
      warnings.push(typeof fields === "string" ? fields : (message ?? ""));
      return warn(fields as object, message);
    };
    const old = make({ logger: watched });
    const received: string[] = [];
    await old.subscribe({ group: g, topics: ["file.deleted"], concurrency: 1, maxAttempts: 3 }, (d) => {
      received.push(d.message.fileId);
      return Promise.resolve();
    });
    expect(warnings.join("\n")).toMatch(/is a classic queue.*pnpm locus bus migrate-queues/);
    expect(await old.queueTypes([g])).toEqual({ [g]: "classic" });
    const first = deleted();
    await old.publish("file.deleted", first);
    await waitFor(() => received.length === 1, 5_000, "a message through the classic queue");

    const operator = make();
    await expect(operator.migrateQueues({ [g]: ["file.deleted"] })).rejects.toThrow(
      /has 1 consumer\(s\): stop them/,
    );
    await old.close();
    // Messages waiting in the classic queue when the migration starts.
    const publisher = make();
    const waiting = [deleted(), deleted()];
    for (const m of waiting) await publisher.publish("file.deleted", m);
    const [migration] = await operator.migrateQueues({ [g]: ["file.deleted"] });
    expect(migration).toEqual({ group: g, queue, outcome: "migrated", moved: 2 });
    expect(await operator.queueTypes([g])).toEqual({ [g]: "quorum" });
    expect(await operator.migrateQueues({ [g]: ["file.deleted"] })).toEqual([
      { group: g, queue, outcome: "quorum", moved: 0 },
    ]);

    // A publisher that routed to the classic queue goes on publishing (on RabbitMQ 3.10 its
    // channel fails once with INTERNAL_ERROR, and the bus reconnects and publishes again).
    const later = deleted();
    await publisher.publish("file.deleted", later);
    const upgraded = make();
    await upgraded.subscribe({ group: g, topics: ["file.deleted"], concurrency: 1, maxAttempts: 3 }, (d) => {
      received.push(d.message.fileId);
      return Promise.resolve();
    });
    await waitFor(() => received.length === 4, 5_000, "every message after the migration");
    expect([...received].sort()).toEqual([first, ...waiting, later].map((m) => m.fileId).sort());
    expect(await peek(`${queue}.migrating`)).toEqual([]);
  });

  it("refuses a second subscription of a group, and everything after close()", async () => {
    const g = group("once");
    const bus = make();
    const options = { group: g, topics: ["file.deleted" as const], concurrency: 1, maxAttempts: 1 };
    await bus.subscribe(options, () => Promise.resolve());
    await expect(bus.subscribe(options, () => Promise.resolve())).rejects.toThrow(/already subscribed/);
    await bus.close();
    await expect(bus.publish("file.deleted", deleted())).rejects.toThrow(/closed/);
    await expect(
      bus.subscribe({ ...options, group: group("late") }, () => Promise.resolve()),
    ).rejects.toThrow(/closed/);
    await expect(bus.check()).rejects.toThrow(/closed/);
    await expect(bus.close()).resolves.toBeUndefined();
  });
});

/** The broker's id for the connection with this connection_name (set by the bus as a client property). */
async function connectionPid(name: string): Promise<string> {
  let stdout: string;
  try {
    ({ stdout } = await run("rabbitmqctl", [
      "-q",
      "list_connections",
      "--no-table-headers",
      "pid",
      "client_properties",
    ]));
  } catch (err) {
    throw new Error(
      `rabbitmqctl failed (this test drops a connection from the broker's side, so it needs rabbitmqctl ` +
        `on the broker's machine): ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const line = stdout.split("\n").find((l) => l.includes(`{"connection_name","${name}"}`));
  if (!line) throw new Error(`No connection named ${name} on the broker`);
  return line.split("\t")[0]!;
}
