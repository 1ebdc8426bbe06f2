// Consuming: each subscription's channel, its deliveries run within its concurrency, and what
// happens to a message whose handler failed: a retry after a back-off, or a dead letter.

import { randomUUID } from "node:crypto";
import { MessageSchemas, type MessageOf, type Topic } from "@locus/contracts";
import { backoffDelay, type Logger } from "@locus/runtime";
import type { Channel, ConsumeMessage, Options } from "amqplib";
import { stoppedForClose, type Delivery, type Handler, type SubscribeOptions } from "./bus.ts";
import {
  AttemptHeader,
  CONTENT_TYPE,
  DeliveryCountHeader,
  GroupHeader,
  ReasonHeader,
  declareGroupQueues,
  type GroupQueues,
  type QueueType,
  type WorkQueueSettings,
} from "./rabbitmq-topology.ts";
import { errorMessage, type Live, type RabbitMqConnection } from "./rabbitmq-connection.ts";
import { carriedHeaders } from "./message-headers.ts";

// AMQP header tables are capped at 64 KiB; a long error message must not make the dead letter unsendable.
const MAX_REASON_LENGTH = 2_000;

export interface Subscription {
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
  /** The work queue's type on the broker, once declared (a classic queue counts no deliveries). */
  queueType?: QueueType;
}

function isTopic(value: unknown): value is Topic {
  return typeof value === "string" && Object.hasOwn(MessageSchemas, value);
}

export interface ConsumerSettings {
  logger: Logger;
  exchange: string;
  connection: RabbitMqConnection;
  retryBaseMs: number;
  maxRetryDelayMs: number;
  operationTimeoutMs: number;
  workQueue: WorkQueueSettings;
}

/** The bus's subscriptions, and the handling of their deliveries. */
export class GroupConsumers {
  /** Listed only once consuming (see RabbitMqBus.subscribe). */
  readonly subscriptions: Subscription[] = [];
  private readonly logger: Logger;
  private readonly exchange: string;
  private readonly connection: RabbitMqConnection;
  private readonly retryBaseMs: number;
  private readonly maxRetryDelayMs: number;
  private readonly operationTimeoutMs: number;
  private readonly workQueue: WorkQueueSettings;
  /** Aborted at stop: long handlers stop at a safe point and hand their message back. */
  private readonly closing = new AbortController();

  constructor(settings: ConsumerSettings) {
    this.logger = settings.logger;
    this.exchange = settings.exchange;
    this.connection = settings.connection;
    this.retryBaseMs = settings.retryBaseMs;
    this.maxRetryDelayMs = settings.maxRetryDelayMs;
    this.operationTimeoutMs = settings.operationTimeoutMs;
    this.workQueue = settings.workQueue;
  }

  /** Declares and consumes every subscription on a new connection. */
  async resume(live: Live): Promise<void> {
    for (const sub of this.subscriptions) await this.consume(live, sub);
  }

  /** Forgets the channels of a connection that is gone. */
  detach(live: Live): void {
    for (const sub of this.subscriptions) {
      if (sub.live === live) {
        sub.live = undefined;
        sub.channel = undefined;
        sub.consumerTag = undefined;
      }
    }
  }

  /** At close: stops deliveries, then waits for the handlers already running. */
  async stop(): Promise<void> {
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
    this.closing.abort(new Error("the bus is closing"));
    while (this.subscriptions.some((s) => s.inFlight.size > 0)) {
      await Promise.allSettled(this.subscriptions.flatMap((s) => [...s.inFlight]));
    }
  }

  /** Declares the group's queues and bindings on a channel of its own, and starts consuming. */
  async consume(live: Live, sub: Subscription): Promise<void> {
    const channel = await live.connection.createChannel();
    channel.on("error", (err: Error) => {
      this.logger.warn({ group: sub.options.group, reason: err.message }, "RabbitMQ consumer channel error");
    });
    try {
      await channel.assertExchange(this.exchange, "topic", { durable: true });
      const declared = await declareGroupQueues(
        live.connection,
        channel,
        this.exchange,
        sub.queues,
        sub.options.topics,
        this.workQueue,
      );
      // Said once per group, not on every reconnection.
      if (declared.note && sub.queueType === undefined) {
        this.logger.warn({ group: sub.options.group, queueType: declared.type }, declared.note);
      }
      sub.queueType = declared.type;
      // Per consumer (global false): the broker never has more unacked deliveries out than handlers may run.
      await channel.prefetch(sub.options.concurrency);
      // Before consuming: a queue with messages waiting delivers them before consume() resolves.
      sub.live = live;
      sub.channel = channel;
      const { consumerTag } = await channel.consume(sub.queues.queue, (msg) =>
        this.onDelivery(live, sub, channel, msg),
      );
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
      if (sub.channel === channel && !this.connection.closed) {
        this.connection.connectionLost(live, new Error(`consumer channel of ${sub.options.group} closed`));
      }
    });
  }

  private onDelivery(live: Live, sub: Subscription, channel: Channel, msg: ConsumeMessage | null): void {
    if (msg === null) {
      // The broker cancelled the consumer (its queue was deleted): redeclare everything.
      this.connection.connectionLost(
        live,
        new Error(`consumer of ${sub.options.group} cancelled by the broker`),
      );
      return;
    }
    const run = (): void => {
      if (this.connection.closing || sub.channel !== channel) {
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
    const unanswered = readDeliveryCount(msg);
    const delivery = {
      topic,
      message: parsed.data as MessageOf<Topic>,
      attempt,
      final: attempt >= maxAttempts,
      ...(typeof msg.properties.timestamp === "number"
        ? { publishedAt: msg.properties.timestamp * 1000 }
        : {}),
      // The broker says so (a classic queue's flag, a quorum queue's count of unanswered deliveries).
      ...(msg.fields.redelivered || unanswered > 0 ? { redelivered: true } : {}),
    } as Delivery;
    if (unanswered >= this.workQueue.deliveryLimit) {
      await this.abandon(sub, channel, msg, delivery, unanswered);
      return;
    }
    try {
      // The publisher's headers (trace context), for the handler's span.
      const headers = carriedHeaders(msg.properties.headers);
      const signal = this.closing.signal;
      await sub.handler(headers ? { ...delivery, headers, signal } : { ...delivery, signal });
    } catch (err) {
      if (stoppedForClose(this.closing.signal, err)) {
        this.handBack(sub, topic, attempt, msg);
        return;
      }
      const reason = errorMessage(err);
      if (attempt >= maxAttempts) await this.deadLetter(sub, channel, msg, attempt, reason);
      else await this.retryLater(sub, channel, msg, topic, attempt, reason);
      return;
    }
    this.ack(sub, channel, msg);
  }

  /**
   * A message that every worker taking it left without an answer, `unanswered` times: running its
   * handler again would only stop another worker. Its subscriber fails the work (abandon), then it
   * goes to dead letters. If that cannot be done now, the caller requeues it, and the broker's own
   * limit (one more) dead-letters it the next time it comes back unanswered.
   */
  private async abandon(
    sub: Subscription,
    channel: Channel,
    msg: ConsumeMessage,
    delivery: Delivery,
    unanswered: number,
  ): Promise<void> {
    const reason =
      `abandoned: delivered ${unanswered + 1} times, the first ${unanswered} ending without an answer ` +
      "(the worker that took it crashed, was killed or lost its connection)";
    await sub.options.abandon?.(delivery, reason);
    await this.deadLetter(sub, channel, msg, delivery.attempt, reason);
  }

  /**
   * A handler that stopped for the close: its message is left unacknowledged, and the broker gives
   * it to the next worker as it stands (the same attempt). Not republished: a quorum queue has
   * already taken back what a cancelled consumer held (RabbitMQ 3.10 does so at basic.cancel), so a
   * copy would be a second message. The broker counts it as a delivery without an answer, towards
   * the queue's delivery limit (WorkQueueSettings.deliveryLimit).
   */
  private handBack(sub: Subscription, topic: Topic, attempt: number, msg: ConsumeMessage): void {
    this.logger.info(
      { group: sub.options.group, topic, attempt, messageId: msg.properties.messageId },
      "handler stopped: the bus is closing; the broker hands the message to the next worker",
    );
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
    await this.connection.confirmedPublish(
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
        headers: { ...carriedHeaders(msg.properties.headers), [AttemptHeader]: attempt + 1 },
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
    await this.connection.confirmedPublish(
      live,
      "",
      sub.queues.dead,
      msg.content,
      {
        ...carriedProperties(msg, typeof topic === "string" ? topic : undefined),
        headers: {
          ...carriedHeaders(msg.properties.headers),
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
    const live = this.connection.live;
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

/** How many deliveries of this message ended without an answer (quorum queues count; classic ones do not). */
function readDeliveryCount(msg: ConsumeMessage): number {
  const value: unknown = msg.properties.headers?.[DeliveryCountHeader];
  return typeof value === "number" && Number.isInteger(value) && value > 0 ? value : 0;
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
