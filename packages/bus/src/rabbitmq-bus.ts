import { randomUUID } from "node:crypto";
import { MessageSchemas, type MessageOf, type Topic } from "@locus/contracts";
import type { Logger } from "@locus/runtime";
import amqp from "amqplib";
import type { Options } from "amqplib";
import type { Bus, Handler, PublishOptions, SubscribeOptions } from "./bus.ts";
import { carriedHeaders } from "./message-headers.ts";
import {
  AttemptHeader,
  CONTENT_TYPE,
  DEFAULT_WORK_QUEUE,
  PERMANENT_CHANNEL_ERRORS,
  declareGroupQueues,
  declareWorkQueue,
  groupQueues,
  type QueueType,
  type WorkQueueSettings,
} from "./rabbitmq-topology.ts";
import { migrateToQuorum, type QueueMigration } from "./rabbitmq-queue-migration.ts";
import { RabbitMqConnection, errorMessage } from "./rabbitmq-connection.ts";
import { GroupConsumers, type Subscription } from "./rabbitmq-consumers.ts";
import { peekDeadLetters, replayDeadLetters, type DeadLetterRecord } from "./rabbitmq-dead-letters.ts";

export {
  AttemptHeader,
  GroupHeader,
  ReasonHeader,
  groupQueues,
  type GroupQueues,
  type QueueType,
  type WorkQueueSettings,
} from "./rabbitmq-topology.ts";
export { QueueInUseError, type QueueMigration } from "./rabbitmq-queue-migration.ts";

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
  /** The work queues' type and delivery limit (default: quorum, 5). */
  workQueue?: Partial<WorkQueueSettings>;
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
  private readonly exchange: string;
  private readonly prefix: string;
  private readonly operationTimeoutMs: number;
  private readonly connection: RabbitMqConnection;
  private readonly consumers: GroupConsumers;
  private readonly workQueue: WorkQueueSettings;
  private closePromise: Promise<void> | undefined;

  constructor(options: RabbitMqBusOptions) {
    this.prefix = options.prefix ?? "";
    this.exchange = `${this.prefix}${options.exchange ?? "locus"}`;
    this.operationTimeoutMs = options.operationTimeoutMs ?? 30_000;
    this.workQueue = { ...DEFAULT_WORK_QUEUE, ...options.workQueue };
    this.connection = new RabbitMqConnection(
      {
        url: options.url,
        logger: options.logger,
        exchange: this.exchange,
        operationTimeoutMs: this.operationTimeoutMs,
        reconnectBaseMs: options.reconnectBaseMs ?? 200,
        reconnectMaxMs: options.reconnectMaxMs ?? 10_000,
        connectionName: options.connectionName ?? "locus",
      },
      {
        resume: (live) => this.consumers.resume(live),
        detach: (live) => this.consumers.detach(live),
        subscriptionCount: () => this.consumers.subscriptions.length,
      },
    );
    this.consumers = new GroupConsumers({
      logger: options.logger,
      exchange: this.exchange,
      connection: this.connection,
      retryBaseMs: options.retryBaseMs ?? 1_000,
      maxRetryDelayMs: options.maxRetryDelayMs ?? 60_000,
      operationTimeoutMs: this.operationTimeoutMs,
      workQueue: this.workQueue,
    });
  }

  /**
   * Connects now and waits for it (bounded by operationTimeoutMs). Optional: publish, subscribe and
   * check connect on first use; call this at start to fail fast with a clear error instead.
   */
  async connect(): Promise<void> {
    if (this.connection.closing) throw new Error("Bus is closed");
    this.connection.start();
    await this.connection.waitForLive(Date.now() + this.operationTimeoutMs);
  }

  async publish<T extends Topic>(topic: T, message: MessageOf<T>, options?: PublishOptions): Promise<void> {
    if (this.connection.closed) throw new Error("Bus is closed");
    // A publisher bug must surface at the publisher, not as a poison message downstream.
    const payload: unknown = MessageSchemas[topic].parse(message);
    const content = Buffer.from(JSON.stringify(payload));
    const properties: Options.Publish = {
      persistent: true,
      contentType: CONTENT_TYPE,
      messageId: randomUUID(),
      type: topic,
      timestamp: Math.floor(Date.now() / 1000),
      headers: { ...carriedHeaders(options?.headers), [AttemptHeader]: 1 },
    };
    this.connection.start();
    const deadline = Date.now() + this.operationTimeoutMs;
    for (;;) {
      const live = await this.connection.waitForLive(deadline);
      try {
        await this.connection.confirmedPublish(live, this.exchange, topic, content, properties, deadline);
        return;
      } catch (err) {
        const channelGone =
          live.lost || err instanceof amqp.IllegalOperationError || /channel closed/i.test(errorMessage(err));
        if (!channelGone || Date.now() >= deadline) throw err;
        // The channel closed before the broker confirmed: the message may or may not be there.
        // Publishing it again after reconnecting keeps it at-least-once; consumers are idempotent.
        this.connection.connectionLost(live, err);
      }
    }
  }

  /**
   * Declares consumer groups' queues and bindings without consuming from them, so messages
   * published before a group's first consumer starts wait in its queue instead of being dropped
   * by the exchange. Idempotent; the queues are durable, so once is enough.
   */
  async declareGroups(groups: Readonly<Record<string, readonly Topic[]>>): Promise<void> {
    this.connection.start();
    const live = await this.connection.waitForLive(Date.now() + this.operationTimeoutMs);
    const channel = await live.connection.createChannel();
    try {
      await channel.assertExchange(this.exchange, "topic", { durable: true });
      for (const [group, topics] of Object.entries(groups)) {
        const queues = groupQueues(group, this.prefix);
        await declareGroupQueues(live.connection, channel, this.exchange, queues, topics, this.workQueue);
      }
    } finally {
      await channel.close().catch(() => undefined);
    }
  }

  async subscribe<T extends Topic>(options: SubscribeOptions<T>, handler: Handler<T>): Promise<void> {
    if (this.connection.closing) throw new Error("Bus is closed");
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
      throw new Error(`concurrency must be a positive integer, got ${options.concurrency}`);
    }
    if (!Number.isInteger(options.maxAttempts) || options.maxAttempts < 1) {
      throw new Error(`maxAttempts must be a positive integer, got ${options.maxAttempts}`);
    }
    if (this.consumers.subscriptions.some((s) => s.options.group === options.group)) {
      throw new Error(`Consumer group ${options.group} is already subscribed`);
    }
    const sub: Subscription = {
      options: { ...options, topics: [...options.topics] },
      handler: handler as unknown as Handler<Topic>,
      queues: groupQueues(options.group, this.prefix),
      inFlight: new Set(),
      waiting: [],
    };
    this.connection.start();
    const deadline = Date.now() + this.operationTimeoutMs;
    for (;;) {
      const live = await this.connection.waitForLive(deadline);
      const done = await this.connection.exclusive(async () => {
        if (this.connection.closing) throw new Error("Bus is closed");
        if (this.connection.live !== live) return false;
        try {
          await this.consumers.consume(live, sub);
        } catch (err) {
          if (PERMANENT_CHANNEL_ERRORS.has((err as { code?: number }).code ?? 0)) throw err;
          this.connection.connectionLost(live, err);
          return false;
        }
        // Listed only once consuming, so a reconnection from now on resumes it, and never twice.
        this.consumers.subscriptions.push(sub);
        return true;
      });
      if (done) return;
    }
  }

  async check(): Promise<void> {
    if (this.connection.closing) throw new Error("Bus is closed");
    this.connection.start();
    const live = this.connection.live;
    if (!live) throw new Error(this.connection.unavailable("not connected (reconnecting)"));
    // A round trip, so a half-open connection is not reported as ready.
    await live.publisher.checkExchange(this.exchange);
  }

  /** The broker's count of ready messages in the group's queue (a passive declare: one round trip). */
  async queueDepth(group: string): Promise<number> {
    if (this.connection.closing) throw new Error("Bus is closed");
    const live = this.connection.live;
    if (!live) throw new Error(this.connection.unavailable("not connected (reconnecting)"));
    const { messageCount } = await live.publisher.checkQueue(groupQueues(group, this.prefix).queue);
    return messageCount;
  }

  /**
   * What the broker says of a group's work queue (a passive declare: one round trip): messages
   * waiting to be delivered, and consumers attached. Messages delivered but not yet acknowledged
   * are in neither figure: AMQP 0-9-1 does not report them (only the management plugin's HTTP API).
   */
  async queueStats(group: string): Promise<{ waiting: number; consumers: number }> {
    await this.connect();
    const live = await this.connection.waitForLive(Date.now() + this.operationTimeoutMs);
    const { messageCount, consumerCount } = await live.publisher.checkQueue(
      groupQueues(group, this.prefix).queue,
    );
    return { waiting: messageCount, consumers: consumerCount };
  }

  /** How many messages a group's dead-letter queue holds. */
  async deadLetterCount(group: string): Promise<number> {
    await this.connect();
    const live = await this.connection.waitForLive(Date.now() + this.operationTimeoutMs);
    return (await live.publisher.checkQueue(groupQueues(group, this.prefix).dead)).messageCount;
  }

  /** Up to `limit` of a group's dead letters, oldest first, left where they are (for operators). */
  async deadLetters(group: string, limit: number): Promise<DeadLetterRecord[]> {
    await this.connect();
    const live = await this.connection.waitForLive(Date.now() + this.operationTimeoutMs);
    return peekDeadLetters(live.connection, groupQueues(group, this.prefix), group, limit);
  }

  /**
   * Hands up to `limit` of a group's dead letters back to its queue, with their attempts anew,
   * calling `beforeEach` with each one first.
   */
  async replayDeadLetters(
    group: string,
    limit: number,
    beforeEach?: (letter: DeadLetterRecord) => Promise<void>,
  ): Promise<DeadLetterRecord[]> {
    await this.connect();
    const live = await this.connection.waitForLive(Date.now() + this.operationTimeoutMs);
    return replayDeadLetters(live.connection, groupQueues(group, this.prefix), group, limit, beforeEach);
  }

  /** Each group's work queue type as the broker has it (declaring it if missing), for `locus status`. */
  async queueTypes(groups: readonly string[]): Promise<Record<string, QueueType>> {
    await this.connect();
    const live = await this.connection.waitForLive(Date.now() + this.operationTimeoutMs);
    const types: Record<string, QueueType> = {};
    for (const group of groups) {
      const declared = await declareWorkQueue(
        live.connection,
        groupQueues(group, this.prefix),
        this.workQueue,
      );
      types[group] = declared.type;
    }
    return types;
  }

  /**
   * Makes each group's classic work queue a quorum queue of the same name, keeping its messages
   * (see migrateToQuorum). Refuses a group whose queue still has consumers.
   */
  async migrateQueues(groups: Readonly<Record<string, readonly Topic[]>>): Promise<QueueMigration[]> {
    await this.connect();
    const live = await this.connection.waitForLive(Date.now() + this.operationTimeoutMs);
    const results: QueueMigration[] = [];
    for (const [group, topics] of Object.entries(groups)) {
      const queues = groupQueues(group, this.prefix);
      results.push(
        await migrateToQuorum(live.connection, this.exchange, group, queues, topics, this.workQueue),
      );
    }
    return results;
  }

  close(): Promise<void> {
    this.closePromise ??= this.shutdown();
    return this.closePromise;
  }

  private async shutdown(): Promise<void> {
    this.connection.beginClose();
    await this.consumers.stop();
    await this.connection.finishClose();
  }
}
