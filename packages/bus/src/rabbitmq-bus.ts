import { randomUUID } from "node:crypto";
import { MessageSchemas, type MessageOf, type Topic } from "@locus/contracts";
import { backoffDelay, type Logger } from "@locus/runtime";
import amqp from "amqplib";
import type { Channel, ChannelModel, ConfirmChannel, ConsumeMessage, Options } from "amqplib";
import type { Bus, Delivery, Handler, SubscribeOptions } from "./bus.ts";

export interface RabbitMqBusOptions {
  /** amqp://user:password@host:port/vhost; never logged with its password. */
  url: string;
  logger: Logger;
  /** The topic exchange every message is published to. */
  exchange?: string;
  /** Put before every exchange and queue name, so tests (or tenants of one vhost) stay apart. */
  prefix?: string;
  /** Back-off before the second attempt; doubles on each further one, up to maxRetryDelayMs. */
  retryBaseMs?: number;
  maxRetryDelayMs?: number;
  /** How long publish() and subscribe() wait for the broker (during an outage too) before rejecting. */
  operationTimeoutMs?: number;
  /** Pause before reconnecting; doubles (with jitter) on each failed attempt, up to reconnectMaxMs. */
  reconnectBaseMs?: number;
  reconnectMaxMs?: number;
  /** Shown by the broker (`rabbitmqctl list_connections client_properties`) to tell processes apart. */
  connectionName?: string;
}

/** The queues a consumer group owns; exported so tests and operators' tools agree on the names. */
export interface GroupQueues {
  /** Bound to the exchange with each of the group's topics; the group's consumers read it. */
  queue: string;
  /** Holds failed messages until their per-message TTL ends, then dead-letters them back to `queue`. */
  retry: string;
  /** Where messages end after their last attempt, or when they fail validation; kept for operators. */
  dead: string;
}

export function groupQueues(group: string, prefix = ""): GroupQueues {
  const queue = `${prefix}${group}`;
  return { queue, retry: `${queue}.retry`, dead: `${queue}.dead` };
}

/** Headers this adapter maintains. The topic travels in the `type` property: routing keys change on retry. */
export const AttemptHeader = "x-locus-attempt";
export const ReasonHeader = "x-locus-reason";
export const GroupHeader = "x-locus-group";

const CONTENT_TYPE = "application/json";
// AMQP header tables are capped at 64 KiB; a long error message must not make the dead letter unsendable.
const MAX_REASON_LENGTH = 2_000;
// Channel-level errors that mean our request is wrong (topology declared differently elsewhere,
// access refused), not that the connection went away: retrying cannot help.
const PERMANENT_CHANNEL_ERRORS = new Set([403, 404, 405, 406]);

interface Live {
  connection: ChannelModel;
  publisher: ConfirmChannel;
  lost: boolean;
}

interface Subscription {
  options: SubscribeOptions<Topic>;
  handler: Handler<Topic>;
  queues: GroupQueues;
  /** The channel consuming now; deliveries from an older channel can no longer be acked. */
  channel?: Channel;
  /** The connection that channel belongs to. */
  live?: Live;
  consumerTag?: string;
  inFlight: Set<Promise<void>>;
  /** Deliveries held back while a previous connection's handlers still use the concurrency. */
  waiting: (() => void)[];
}

interface Waiter {
  resolve: (live: Live) => void;
  reject: (err: Error) => void;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(unparsable AMQP URL)";
  }
}

function isTopic(value: unknown): value is Topic {
  return typeof value === "string" && Object.hasOwn(MessageSchemas, value);
}

/**
 * The Bus on RabbitMQ, for the split shape.
 *
 *   publish ─▶ <exchange> (topic) ─topic─▶ <group> ─▶ consumer (prefetch = concurrency)
 *                                             ▲          │ handler failed (republish confirmed, then ack)
 *                                             │          ├─▶ <group>.retry  attempt + 1, TTL = back-off;
 *                                             └──────────┼── when it expires: DLX "", routing key <group>
 *                                                        └─▶ <group>.dead   last attempt, or invalid
 *
 * Messages are persistent and publishes confirmed; a delivery is acked only once its handler has
 * resolved, or once its retry or dead letter is confirmed, so a crash at any point leaves the
 * message on the broker (at-least-once: handlers are idempotent). Retries need no plugin: the
 * retry queue has no consumers and dead-letters expired messages back through the default exchange.
 * One connection per bus: a publishing confirm channel and a channel per subscription; when any of
 * them drops, the whole connection is rebuilt with back-off, topology redeclared, consumers resumed.
 */
export class RabbitMqBus implements Bus {
  private readonly logger: Logger;
  private readonly exchange: string;
  private readonly prefix: string;
  private readonly retryBaseMs: number;
  private readonly maxRetryDelayMs: number;
  private readonly operationTimeoutMs: number;
  private readonly reconnectBaseMs: number;
  private readonly reconnectMaxMs: number;
  private readonly connectionName: string;
  private readonly displayUrl: string;

  private readonly subscriptions: Subscription[] = [];
  private live: Live | undefined;
  private waiters = new Set<Waiter>();
  private started = false;
  private reconnecting = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private wakeReconnect: (() => void) | undefined;
  private lastError: string | undefined;
  private closing = false;
  private closed = false;
  private closePromise: Promise<void> | undefined;
  // Topology changes (connecting, subscribing) run one at a time, so a subscription is declared
  // exactly once on each connection, however a reconnection and a subscribe() interleave.
  private exclusiveTail: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: RabbitMqBusOptions) {
    this.logger = options.logger;
    this.prefix = options.prefix ?? "";
    this.exchange = `${this.prefix}${options.exchange ?? "locus"}`;
    this.retryBaseMs = options.retryBaseMs ?? 1_000;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 60_000;
    this.operationTimeoutMs = options.operationTimeoutMs ?? 30_000;
    this.reconnectBaseMs = options.reconnectBaseMs ?? 200;
    this.reconnectMaxMs = options.reconnectMaxMs ?? 10_000;
    this.connectionName = options.connectionName ?? "locus";
    this.displayUrl = withoutPassword(options.url);
  }

  /**
   * Connects now and waits for it (bounded by operationTimeoutMs). Optional: publish, subscribe and
   * check connect on first use; call this at start to fail fast with a clear error instead.
   */
  async connect(): Promise<void> {
    if (this.closing) throw new Error("Bus is closed");
    this.start();
    await this.waitForLive(Date.now() + this.operationTimeoutMs);
  }

  async publish<T extends Topic>(topic: T, message: MessageOf<T>): Promise<void> {
    if (this.closed) throw new Error("Bus is closed");
    // A publisher bug must surface at the publisher, not as a poison message downstream.
    const payload: unknown = MessageSchemas[topic].parse(message);
    const content = Buffer.from(JSON.stringify(payload));
    const properties: Options.Publish = {
      persistent: true,
      contentType: CONTENT_TYPE,
      messageId: randomUUID(),
      type: topic,
      timestamp: Math.floor(Date.now() / 1000),
      headers: { [AttemptHeader]: 1 },
    };
    this.start();
    const deadline = Date.now() + this.operationTimeoutMs;
    for (;;) {
      const live = await this.waitForLive(deadline);
      try {
        await this.confirmedPublish(live, this.exchange, topic, content, properties, deadline);
        return;
      } catch (err) {
        const channelGone =
          live.lost || err instanceof amqp.IllegalOperationError || /channel closed/i.test(errorMessage(err));
        if (!channelGone || Date.now() >= deadline) throw err;
        // The channel closed before the broker confirmed: the message may or may not be there.
        // Publishing it again after reconnecting keeps it at-least-once; consumers are idempotent.
        this.connectionLost(live, err);
      }
    }
  }

  /**
   * Declares consumer groups' queues and bindings without consuming from them, so messages
   * published before a group's first consumer starts wait in its queue instead of being dropped
   * by the exchange. Idempotent; the queues are durable, so once is enough.
   */
  async declareGroups(groups: Readonly<Record<string, readonly Topic[]>>): Promise<void> {
    this.start();
    const live = await this.waitForLive(Date.now() + this.operationTimeoutMs);
    const channel = await live.connection.createChannel();
    try {
      await channel.assertExchange(this.exchange, "topic", { durable: true });
      for (const [group, topics] of Object.entries(groups)) {
        const { queue, retry, dead } = groupQueues(group, this.prefix);
        await channel.assertQueue(queue, { durable: true });
        for (const topic of topics) await channel.bindQueue(queue, this.exchange, topic);
        await channel.assertQueue(retry, {
          durable: true,
          deadLetterExchange: "",
          deadLetterRoutingKey: queue,
        });
        await channel.assertQueue(dead, { durable: true });
      }
    } finally {
      await channel.close().catch(() => undefined);
    }
  }

  async subscribe<T extends Topic>(options: SubscribeOptions<T>, handler: Handler<T>): Promise<void> {
    if (this.closing) throw new Error("Bus is closed");
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
      throw new Error(`concurrency must be a positive integer, got ${options.concurrency}`);
    }
    if (!Number.isInteger(options.maxAttempts) || options.maxAttempts < 1) {
      throw new Error(`maxAttempts must be a positive integer, got ${options.maxAttempts}`);
    }
    if (this.subscriptions.some((s) => s.options.group === options.group)) {
      throw new Error(`Consumer group ${options.group} is already subscribed`);
    }
    const sub: Subscription = {
      options: { ...options, topics: [...options.topics] },
      handler: handler as unknown as Handler<Topic>,
      queues: groupQueues(options.group, this.prefix),
      inFlight: new Set(),
      waiting: [],
    };
    this.start();
    const deadline = Date.now() + this.operationTimeoutMs;
    for (;;) {
      const live = await this.waitForLive(deadline);
      const done = await this.exclusive(async () => {
        if (this.closing) throw new Error("Bus is closed");
        if (this.live !== live) return false;
        try {
          await this.consume(live, sub);
        } catch (err) {
          if (PERMANENT_CHANNEL_ERRORS.has((err as { code?: number }).code ?? 0)) throw err;
          this.connectionLost(live, err);
          return false;
        }
        // Listed only once consuming, so a reconnection from now on resumes it, and never twice.
        this.subscriptions.push(sub);
        return true;
      });
      if (done) return;
    }
  }

  async check(): Promise<void> {
    if (this.closing) throw new Error("Bus is closed");
    this.start();
    const live = this.live;
    if (!live) throw new Error(this.unavailable("not connected (reconnecting)"));
    // A round trip, so a half-open connection is not reported as ready.
    await live.publisher.checkExchange(this.exchange);
  }

  close(): Promise<void> {
    this.closePromise ??= this.shutdown();
    return this.closePromise;
  }

  private async shutdown(): Promise<void> {
    this.closing = true;
    clearTimeout(this.reconnectTimer);
    this.wakeReconnect?.();
    this.rejectWaiters(new Error("Bus is closed"));
    // Stop deliveries first; handlers already running keep the connection to ack and republish.
    await Promise.all(
      this.subscriptions.map(async (sub) => {
        const { channel, consumerTag } = sub;
        if (!channel || !consumerTag) return;
        try {
          await channel.cancel(consumerTag);
        } catch (err) {
          this.logger.debug({ err, group: sub.options.group }, "cancelling a consumer failed");
        }
      }),
    );
    for (const sub of this.subscriptions) for (const release of sub.waiting.splice(0)) release();
    while (this.subscriptions.some((s) => s.inFlight.size > 0)) {
      await Promise.allSettled(this.subscriptions.flatMap((s) => [...s.inFlight]));
    }
    // Let a reconnection that was already underway finish, so its connection is closed too.
    await this.exclusive(() => Promise.resolve());
    this.closed = true;
    const live = this.live;
    this.live = undefined;
    if (live) {
      live.lost = true;
      try {
        await live.connection.close();
      } catch (err) {
        this.logger.debug({ err }, "closing the RabbitMQ connection failed");
      }
    }
  }

  // ---- connection ----------------------------------------------------------------------------

  private start(): void {
    if (this.started || this.closing) return;
    this.started = true;
    this.scheduleReconnect(0);
  }

  private scheduleReconnect(firstDelayMs: number): void {
    if (this.reconnecting || this.closing) return;
    this.reconnecting = true;
    void this.reconnectLoop(firstDelayMs);
  }

  private async reconnectLoop(firstDelayMs: number): Promise<void> {
    let delay = firstDelayMs;
    for (let attempt = 1; ; attempt++) {
      if (delay > 0) await this.pause(delay);
      if (this.closing) break;
      try {
        const live = await this.exclusive(() => this.establish());
        // Cleared in the same tick as `live` is set: a loss right after this starts a new loop.
        this.reconnecting = false;
        this.lastError = undefined;
        this.logger.info(
          { url: this.displayUrl, attempt, subscriptions: this.subscriptions.length },
          "connected to RabbitMQ",
        );
        for (const waiter of this.waiters) waiter.resolve(live);
        this.waiters.clear();
        return;
      } catch (err) {
        this.lastError = errorMessage(err);
        // Jittered (half to all of the ceiling), so a fleet of workers does not reconnect in lockstep.
        delay = backoffDelay(attempt, {
          baseMs: this.reconnectBaseMs,
          maxMs: this.reconnectMaxMs,
          jitter: true,
        });
        this.logger.warn(
          { url: this.displayUrl, attempt, retryInMs: delay, reason: this.lastError },
          "cannot connect to RabbitMQ; retrying",
        );
      }
    }
    this.reconnecting = false;
  }

  /** Sleeps, but wakes at once when the bus closes. */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.reconnectTimer = setTimeout(resolve, ms);
      this.wakeReconnect = resolve;
    });
  }

  private async establish(): Promise<Live> {
    if (this.closing) throw new Error("Bus is closed");
    const connection = await amqp.connect(this.options.url, {
      clientProperties: { connection_name: this.connectionName },
      timeout: Math.min(this.operationTimeoutMs, 10_000),
    });
    const live: Live = { connection, publisher: undefined as unknown as ConfirmChannel, lost: false };
    connection.on("error", (err: Error) => {
      this.logger.warn({ reason: err.message }, "RabbitMQ connection error");
    });
    connection.on("close", (err?: Error) => {
      // Channels report their closing first, without the broker's reason; this has it.
      if (err && !this.closing) this.logger.warn({ reason: err.message }, "RabbitMQ closed the connection");
      this.connectionLost(live, err);
    });
    connection.on("blocked", (reason: string) => {
      // Publishes wait for confirms (up to their timeout) while the broker is short of memory or disk.
      this.logger.warn({ reason }, "RabbitMQ blocked this connection's publishers");
    });
    connection.on("unblocked", () => this.logger.info("RabbitMQ unblocked this connection's publishers"));
    try {
      const publisher = await connection.createConfirmChannel();
      live.publisher = publisher;
      publisher.on("error", (err: Error) => {
        this.logger.warn({ reason: err.message }, "RabbitMQ publishing channel error");
      });
      publisher.on("close", () => this.connectionLost(live, new Error("publishing channel closed")));
      await publisher.assertExchange(this.exchange, "topic", { durable: true });
      for (const sub of this.subscriptions) await this.consume(live, sub);
      if (live.lost) throw new Error("connection lost while declaring the topology");
      if (this.closing) throw new Error("Bus is closed");
    } catch (err) {
      live.lost = true;
      for (const sub of this.subscriptions) {
        if (sub.live === live) {
          sub.live = undefined;
          sub.channel = undefined;
          sub.consumerTag = undefined;
        }
      }
      await connection.close().catch(() => undefined);
      throw err;
    }
    this.live = live;
    return live;
  }

  /**
   * Any channel or the connection dropping rebuilds everything: one recovery path, and no
   * delivery can be acked on a channel other than the one it came from.
   */
  private connectionLost(live: Live, err?: unknown): void {
    if (live.lost) return;
    live.lost = true;
    if (this.live === live) this.live = undefined;
    for (const sub of this.subscriptions) {
      if (sub.live === live) {
        sub.live = undefined;
        sub.channel = undefined;
        sub.consumerTag = undefined;
      }
    }
    // Only part of it may have failed (a channel); close the rest so the broker requeues its deliveries.
    void live.connection.close().catch(() => undefined);
    if (this.closing) return;
    this.logger.warn(
      { url: this.displayUrl, reason: err === undefined ? "closed" : errorMessage(err) },
      "lost the RabbitMQ connection; reconnecting",
    );
    this.scheduleReconnect(this.reconnectBaseMs);
  }

  private waitForLive(deadline: number): Promise<Live> {
    // While closing, handlers still in flight may publish on the open connection.
    if (this.live) return Promise.resolve(this.live);
    if (this.closing) return Promise.reject(new Error("Bus is closed"));
    return new Promise<Live>((resolve, reject) => {
      const timer = setTimeout(
        () => {
          this.waiters.delete(waiter);
          reject(new Error(this.unavailable(`not connected within ${this.operationTimeoutMs} ms`)));
        },
        Math.max(0, deadline - Date.now()),
      );
      const waiter: Waiter = {
        resolve: (live) => {
          clearTimeout(timer);
          resolve(live);
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      this.waiters.add(waiter);
    });
  }

  private rejectWaiters(err: Error): void {
    for (const waiter of this.waiters) waiter.reject(err);
    this.waiters.clear();
  }

  private unavailable(what: string): string {
    const cause = this.lastError ? ` (last error: ${this.lastError})` : "";
    return `RabbitMQ at ${this.displayUrl} is unavailable: ${what}${cause}`;
  }

  private exclusive<R>(task: () => Promise<R>): Promise<R> {
    const run = this.exclusiveTail.then(task, task);
    this.exclusiveTail = run.catch(() => undefined);
    return run;
  }

  /** Resolves on the broker's confirm; rejects on a nack, a closed channel or the deadline. */
  private confirmedPublish(
    live: Live,
    exchange: string,
    routingKey: string,
    content: Buffer,
    properties: Options.Publish,
    deadline: number,
  ): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(new Error(this.unavailable(`publish not confirmed within ${this.operationTimeoutMs} ms`))),
        Math.max(0, deadline - Date.now()),
      );
      try {
        live.publisher.publish(exchange, routingKey, content, properties, (err: unknown) => {
          clearTimeout(timer);
          if (!err) resolve();
          else if (errorMessage(err) === "message nacked") {
            reject(new Error(`RabbitMQ refused the message for ${routingKey} (nack)`));
          } else reject(err instanceof Error ? err : new Error(errorMessage(err)));
        });
      } catch (err) {
        // A closed channel throws synchronously.
        clearTimeout(timer);
        reject(err instanceof Error ? err : new Error(errorMessage(err)));
      }
    });
  }

  // ---- consuming -----------------------------------------------------------------------------

  /** Declares the group's queues and bindings on a channel of its own, and starts consuming. */
  private async consume(live: Live, sub: Subscription): Promise<void> {
    const { queue, retry, dead } = sub.queues;
    const channel = await live.connection.createChannel();
    channel.on("error", (err: Error) => {
      this.logger.warn({ group: sub.options.group, reason: err.message }, "RabbitMQ consumer channel error");
    });
    try {
      await channel.assertExchange(this.exchange, "topic", { durable: true });
      await channel.assertQueue(queue, { durable: true });
      for (const topic of sub.options.topics) await channel.bindQueue(queue, this.exchange, topic);
      await channel.assertQueue(retry, {
        durable: true,
        deadLetterExchange: "",
        deadLetterRoutingKey: queue,
      });
      await channel.assertQueue(dead, { durable: true });
      // Per consumer (global false): the broker never has more unacked deliveries out than handlers may run.
      await channel.prefetch(sub.options.concurrency);
      // Before consuming: a queue with messages waiting delivers them before consume() resolves.
      sub.live = live;
      sub.channel = channel;
      const { consumerTag } = await channel.consume(queue, (msg) => this.onDelivery(live, sub, channel, msg));
      sub.consumerTag = consumerTag;
    } catch (err) {
      if (sub.channel === channel) {
        sub.live = undefined;
        sub.channel = undefined;
      }
      await channel.close().catch(() => undefined);
      throw err;
    }
    channel.on("close", () => {
      if (sub.channel === channel && !this.closed) {
        this.connectionLost(live, new Error(`consumer channel of ${sub.options.group} closed`));
      }
    });
  }

  private onDelivery(live: Live, sub: Subscription, channel: Channel, msg: ConsumeMessage | null): void {
    if (msg === null) {
      // The broker cancelled the consumer (its queue was deleted): redeclare everything.
      this.connectionLost(live, new Error(`consumer of ${sub.options.group} cancelled by the broker`));
      return;
    }
    const run = (): void => {
      if (this.closing || sub.channel !== channel) {
        // Not ours to handle any more: back to the queue now (the broker requeues it anyway if
        // the channel is gone).
        if (sub.channel === channel) this.safely(() => channel.nack(msg, false, true), sub, "nack");
        return;
      }
      const task: Promise<void> = this.handle(sub, channel, msg)
        .catch((err: unknown) => {
          // The retry or dead letter was not confirmed: hand the message back rather than hold
          // its prefetch slot forever; it comes again with the same attempt number.
          this.logger.error({ err, group: sub.options.group }, "delivery could not be settled; requeued");
          if (sub.channel === channel) this.safely(() => channel.nack(msg, false, true), sub, "nack");
        })
        .finally(() => {
          sub.inFlight.delete(task);
          // A freed slot goes to a delivery held back while handlers from a lost connection finished.
          sub.waiting.shift()?.();
        });
      sub.inFlight.add(task);
    };
    // Prefetch bounds a channel, but after a reconnection handlers from the old channel may still run.
    if (sub.inFlight.size >= sub.options.concurrency) sub.waiting.push(run);
    else run();
  }

  private async handle(sub: Subscription, channel: Channel, msg: ConsumeMessage): Promise<void> {
    const { maxAttempts } = sub.options;
    const attempt = readAttempt(msg);
    const topic: unknown = msg.properties.type ?? msg.fields.routingKey;
    if (!isTopic(topic)) {
      await this.deadLetter(sub, channel, msg, attempt, `unknown topic ${String(topic)}`);
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(msg.content.toString("utf8"));
    } catch {
      await this.deadLetter(sub, channel, msg, attempt, "invalid message: not JSON");
      return;
    }
    const parsed = MessageSchemas[topic].safeParse(body);
    if (!parsed.success) {
      await this.deadLetter(sub, channel, msg, attempt, `invalid message: ${parsed.error.message}`);
      return;
    }
    try {
      await sub.handler({
        topic,
        message: parsed.data as MessageOf<Topic>,
        attempt,
        final: attempt >= maxAttempts,
      } as Delivery);
    } catch (err) {
      const reason = errorMessage(err);
      if (attempt >= maxAttempts) await this.deadLetter(sub, channel, msg, attempt, reason);
      else await this.retryLater(sub, channel, msg, topic, attempt, reason);
      return;
    }
    this.ack(sub, channel, msg);
  }

  private async retryLater(
    sub: Subscription,
    channel: Channel,
    msg: ConsumeMessage,
    topic: Topic,
    attempt: number,
    reason: string,
  ): Promise<void> {
    const live = this.liveFor(sub, channel);
    if (!live) return; // The channel is gone: the broker redelivers the original, as it stands.
    const delay = backoffDelay(attempt, { baseMs: this.retryBaseMs, maxMs: this.maxRetryDelayMs });
    this.logger.warn(
      { group: sub.options.group, topic, attempt, delay, messageId: msg.properties.messageId, reason },
      "handler failed; retrying",
    );
    await this.confirmedPublish(
      live,
      "",
      sub.queues.retry,
      msg.content,
      {
        ...carriedProperties(msg, topic),
        // The retry queue has no consumer: the message waits out its TTL, then is dead-lettered back.
        // RabbitMQ expires messages only at the head of a queue, so a retry can wait behind an older
        // one with a longer back-off: later than asked, never sooner, and at most maxRetryDelayMs.
        expiration: String(delay),
        headers: { [AttemptHeader]: attempt + 1 },
      },
      Date.now() + this.operationTimeoutMs,
    );
    // Only now: a crash before this line leaves the original on the broker to be redelivered.
    this.ack(sub, channel, msg);
  }

  private async deadLetter(
    sub: Subscription,
    channel: Channel,
    msg: ConsumeMessage,
    attempt: number,
    reason: string,
  ): Promise<void> {
    const live = this.liveFor(sub, channel);
    if (!live) return;
    const { group } = sub.options;
    const topic: unknown = msg.properties.type ?? msg.fields.routingKey;
    this.logger.error(
      { group, topic, attempt, messageId: msg.properties.messageId, reason },
      "message dead-lettered",
    );
    await this.confirmedPublish(
      live,
      "",
      sub.queues.dead,
      msg.content,
      {
        ...carriedProperties(msg, typeof topic === "string" ? topic : undefined),
        headers: {
          [AttemptHeader]: attempt,
          [ReasonHeader]: reason.slice(0, MAX_REASON_LENGTH),
          [GroupHeader]: group,
        },
      },
      Date.now() + this.operationTimeoutMs,
    );
    this.ack(sub, channel, msg);
  }

  /** The live connection, if the delivery's channel still belongs to it (and so can be acked). */
  private liveFor(sub: Subscription, channel: Channel): Live | undefined {
    const live = this.live;
    return live && sub.channel === channel ? live : undefined;
  }

  private ack(sub: Subscription, channel: Channel, msg: ConsumeMessage): void {
    // After a reconnection the old delivery tag means nothing (and would close the new channel);
    // the broker has requeued the message, and the redelivery is the at-least-once duplicate.
    if (sub.channel !== channel) return;
    this.safely(() => channel.ack(msg), sub, "ack");
  }

  private safely(action: () => void, sub: Subscription, what: string): void {
    try {
      action();
    } catch (err) {
      this.logger.warn({ err, group: sub.options.group }, `${what} failed; the broker will redeliver`);
    }
  }
}

function readAttempt(msg: ConsumeMessage): number {
  const value: unknown = msg.properties.headers?.[AttemptHeader];
  const attempt = typeof value === "number" ? value : Number(value);
  return Number.isInteger(attempt) && attempt >= 1 ? attempt : 1;
}

/** What a retried or dead-lettered copy keeps from the original; x-death and friends are dropped. */
function carriedProperties(msg: ConsumeMessage, topic: string | undefined): Options.Publish {
  const props = msg.properties;
  const carried: Options.Publish = {
    persistent: true,
    contentType: (props.contentType as string | undefined) ?? CONTENT_TYPE,
    messageId: (props.messageId as string | undefined) ?? randomUUID(),
  };
  if (topic !== undefined) carried.type = topic;
  if (typeof props.timestamp === "number") carried.timestamp = props.timestamp;
  return carried;
}
