import { MessageSchemas, type MessageOf, type Topic } from "@locus/contracts";
import { backoffDelay, type Logger } from "@locus/runtime";
import {
  stoppedForClose,
  type Bus,
  type Delivery,
  type Handler,
  type PublishOptions,
  type SubscribeOptions,
} from "./bus.ts";
import { carriedHeaders } from "./message-headers.ts";

interface Envelope {
  topic: Topic;
  payload: unknown;
  attempt: number;
  publishedAt: number;
  headers: Record<string, string> | undefined;
}

interface Subscription {
  options: SubscribeOptions<Topic>;
  handler: Handler<Topic>;
  queue: Envelope[];
  inFlight: number;
}

export interface DeadLetter {
  group: string;
  topic: Topic;
  payload: unknown;
  reason: string;
  at: string;
}

const MAX_BACKOFF_MS = 30_000;

/**
 * The embedded bus behaves like the broker it stands in for: delivery is asynchronous, each
 * consumer group has its own queue, handlers run with bounded concurrency, failures are retried
 * with exponential back-off and end in dead letters. Messages live only in memory: after a crash
 * the files module re-publishes work for files left unfinished, so nothing is lost.
 */
export class InProcessBus implements Bus {
  private readonly subscriptions: Subscription[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly idleWaiters: (() => void)[] = [];
  private closed = false;
  /** Aborted at close: long handlers stop at a safe point (see Delivery.signal). */
  private readonly closing = new AbortController();
  readonly deadLetters: DeadLetter[] = [];

  constructor(
    private readonly logger: Logger,
    private readonly retryBaseMs = 200,
  ) {}

  // async: a bad payload or a closed bus is a rejected promise, never a synchronous throw.
  // eslint-disable-next-line @typescript-eslint/require-await
  async publish<T extends Topic>(topic: T, message: MessageOf<T>, options?: PublishOptions): Promise<void> {
    if (this.closed) throw new Error("Bus is closed");
    // A publisher bug must surface at the publisher, not as a poison message downstream.
    const payload: unknown = MessageSchemas[topic].parse(message);
    const publishedAt = Date.now();
    const headers = carriedHeaders(options?.headers);
    for (const sub of this.subscriptions) {
      if (sub.options.topics.includes(topic)) {
        sub.queue.push({ topic, payload: structuredClone(payload), attempt: 1, publishedAt, headers });
        this.schedule(sub);
      }
    }
  }

  subscribe<T extends Topic>(options: SubscribeOptions<T>, handler: Handler<T>): Promise<void> {
    if (this.subscriptions.some((s) => s.options.group === options.group)) {
      return Promise.reject(new Error(`Consumer group ${options.group} is already subscribed`));
    }
    this.subscriptions.push({
      options: options,
      handler: handler as unknown as Handler<Topic>,
      queue: [],
      inFlight: 0,
    });
    return Promise.resolve();
  }

  check(): Promise<void> {
    return this.closed ? Promise.reject(new Error("Bus is closed")) : Promise.resolve();
  }

  queueDepth(group: string): Promise<number> {
    const sub = this.subscriptions.find((s) => s.options.group === group);
    return Promise.resolve(sub?.queue.length ?? 0);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.closing.abort(new Error("the bus is closing"));
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await this.whenIdle();
  }

  /** Resolves when no handler is running and nothing is queued or waiting for a retry. */
  whenIdle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private isIdle(): boolean {
    const busy = this.subscriptions.some((s) => s.inFlight > 0 || (!this.closed && s.queue.length > 0));
    return !busy && (this.closed || this.timers.size === 0);
  }

  private notifyIfIdle(): void {
    if (!this.isIdle()) return;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  private schedule(sub: Subscription): void {
    setImmediate(() => this.drain(sub));
  }

  private drain(sub: Subscription): void {
    while (!this.closed && sub.inFlight < sub.options.concurrency && sub.queue.length > 0) {
      const envelope = sub.queue.shift();
      if (!envelope) break;
      sub.inFlight += 1;
      void this.deliver(sub, envelope).finally(() => {
        sub.inFlight -= 1;
        this.drain(sub);
        this.notifyIfIdle();
      });
    }
    this.notifyIfIdle();
  }

  private async deliver(sub: Subscription, envelope: Envelope): Promise<void> {
    const { group, maxAttempts } = sub.options;
    const parsed = MessageSchemas[envelope.topic].safeParse(envelope.payload);
    if (!parsed.success) {
      this.deadLetter(group, envelope, `invalid message: ${parsed.error.message}`);
      return;
    }
    try {
      await sub.handler({
        topic: envelope.topic,
        message: parsed.data as MessageOf<Topic>,
        attempt: envelope.attempt,
        final: envelope.attempt >= maxAttempts,
        publishedAt: envelope.publishedAt,
        ...(envelope.headers ? { headers: envelope.headers } : {}),
        signal: this.closing.signal,
      } as Delivery);
    } catch (err) {
      if (stoppedForClose(this.closing.signal, err)) {
        // Stopped for the close, like the messages still queued: the start-time recovery finds it.
        this.logger.info({ group, topic: envelope.topic }, "handler stopped: the bus is closing");
        return;
      }
      const reason = err instanceof Error ? err.message : String(err);
      if (envelope.attempt >= maxAttempts || this.closed) {
        this.deadLetter(group, envelope, reason);
        return;
      }
      const delay = backoffDelay(envelope.attempt, { baseMs: this.retryBaseMs, maxMs: MAX_BACKOFF_MS });
      this.logger.warn(
        { group, topic: envelope.topic, attempt: envelope.attempt, delay, reason },
        "handler failed; retrying",
      );
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        sub.queue.push({ ...envelope, attempt: envelope.attempt + 1 });
        this.drain(sub);
      }, delay);
      this.timers.add(timer);
    }
  }

  private deadLetter(group: string, envelope: Envelope, reason: string): void {
    this.logger.error(
      { group, topic: envelope.topic, attempt: envelope.attempt, reason },
      "message dead-lettered",
    );
    this.deadLetters.push({
      group,
      topic: envelope.topic,
      payload: envelope.payload,
      reason,
      at: new Date().toISOString(),
    });
    // Keep the most recent ones only: this is a diagnostic, not storage.
    if (this.deadLetters.length > 1000) this.deadLetters.shift();
  }
}
