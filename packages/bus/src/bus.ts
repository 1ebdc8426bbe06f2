import type { MessageOf, Topic } from "@locus/contracts";

/** One delivery of a message; a union over topics, so `switch (delivery.topic)` narrows the message. */
export type Delivery<T extends Topic = Topic> = T extends Topic
  ? {
      topic: T;
      message: MessageOf<T>;
      /** 1 on first delivery, counting up on each redelivery. */
      attempt: number;
      /** True on the last attempt: a handler that fails now sends the message to dead letters. */
      final: boolean;
      /**
       * True when an earlier delivery of this very message ended without an answer (its worker
       * stopped: a crash, a lost connection), so the handler may have done part of its work
       * already; `attempt` does not count those (it counts failures the handler reported).
       */
      redelivered?: boolean;
      /**
       * When the message was first published (ms since the epoch; to the second on RabbitMQ, whose
       * timestamp property is in seconds), kept across retries; absent when the publisher did not say.
       */
      publishedAt?: number;
      /** The headers the message was published with (see PublishOptions), kept across retries. */
      headers?: Readonly<Record<string, string>>;
      /**
       * Aborted once the bus is closing (its process is stopping). A handler with long work that
       * can be resumed may stop at a safe point by throwing the signal's reason
       * (`signal.throwIfAborted()`): its message is then handed back as it stands, neither retried
       * nor counted as an attempt (RabbitMQ: left unacknowledged for the next worker, which gets it
       * as a redelivery; in-process: dropped like every message still queued at close, the work
       * being found again at the next start). Absent where no bus delivered the message (tests
       * calling a handler).
       */
      signal?: AbortSignal;
    }
  : never;

/**
 * Whether a handler's failure is its stop for the bus's close (it threw the delivery's aborted
 * signal's reason, see Delivery.signal): the message is handed back, not retried or dead-lettered.
 */
export function stoppedForClose(signal: AbortSignal | undefined, err: unknown): boolean {
  return signal?.aborted === true && err === signal.reason;
}

export interface PublishOptions {
  /**
   * Text that travels with the message to every delivery of it, its retries and its dead letter
   * included, apart from the payload (trace context: `traceparent`, `tracestate`). Names are
   * lower-case; those starting with `x-` belong to the bus and are not carried.
   */
  headers?: Readonly<Record<string, string>>;
}

export interface SubscribeOptions<T extends Topic> {
  /** Consumer group: each group gets its own copy of every message (a durable queue per group). */
  group: string;
  topics: readonly T[];
  /** Messages handled at once by this subscriber (the broker's prefetch). */
  concurrency: number;
  /** Deliveries before a failing message goes to dead letters. */
  maxAttempts: number;
  /**
   * Called instead of the handler for a message whose deliveries kept ending without an answer
   * (every worker that took it crashed or was killed: the broker counts them; see
   * WorkQueueSettings.deliveryLimit), so its work can be failed with a reason; the message then
   * goes to dead letters. A handler's own failures never come here: they are retried, then given
   * up on the final attempt. Never called by the in-process bus, whose messages die with it.
   */
  abandon?(delivery: Delivery<T>, reason: string): Promise<void>;
}

export type Handler<T extends Topic> = (delivery: Delivery<T>) => Promise<void>;

/**
 * Messages between services: at-least-once, acknowledged only after the handler's effect is done
 * (the handler resolved), retried with back-off when it throws, dead-lettered after maxAttempts.
 * Handlers must therefore be idempotent. Embedded: in-process; split: RabbitMQ.
 */
export interface Bus {
  /** Resolves once the message is safely accepted (for a broker: confirmed). Validates the payload. */
  publish<T extends Topic>(topic: T, message: MessageOf<T>, options?: PublishOptions): Promise<void>;
  subscribe<T extends Topic>(options: SubscribeOptions<T>, handler: Handler<T>): Promise<void>;
  check(): Promise<void>;
  /** Messages waiting in a consumer group's queue (not those being handled), for metrics. */
  queueDepth(group: string): Promise<number>;
  /**
   * Stops delivering, aborts the deliveries' signals, and waits for handlers in flight to finish
   * (or hand their message back).
   */
  close(): Promise<void>;
}
