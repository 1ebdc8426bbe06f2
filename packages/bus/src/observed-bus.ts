// A bus that reports what passes through it (metrics) and traces it, around either adapter.

import type { MessageOf, Topic } from "@locus/contracts";
import { Attr, contextFrom, inSpan, SpanKind, traceHeaders } from "@locus/telemetry";
import {
  stoppedForClose,
  type Bus,
  type Handler,
  type PublishOptions,
  type SubscribeOptions,
} from "./bus.ts";
import { RabbitMqBus } from "./rabbitmq-bus.ts";

/**
 * How one delivery ended: handled, retried (handed back for another attempt), given up (dead
 * letters), or handed_back (its handler stopped for the process's stop, the message left for the
 * next worker as it stands).
 */
export type DeliveryOutcome = "handled" | "retried" | "dead_lettered" | "handed_back";

/** What a bus tells whoever counts: each message published, and how each delivery ended. */
export interface BusObserver {
  messagePublished(topic: Topic): void;
  /** A delivery starts, `ageSeconds` after its message was first published (when known). */
  deliveryStarted(topic: Topic, group: string, ageSeconds: number | undefined): void;
  deliveryEnded(topic: Topic, group: string, outcome: DeliveryOutcome, seconds: number): void;
  /** A message given up on without running its handler (see SubscribeOptions.abandon): dead-lettered. */
  deliveryAbandoned(topic: Topic, group: string): void;
}

/**
 * Topics left out of traces: a file's progress is said every second of a long extraction (and
 * by its heartbeat), which would bury the trace of its upload under spans that tell nothing.
 */
const UNTRACED: ReadonlySet<Topic> = new Set<Topic>(["file.progress"]);

/**
 * `bus`, reporting to `observer`, and tracing: each message is published in a PRODUCER span
 * (`publish <topic>`) whose context travels in the message's headers, and each delivery is
 * handled in a CONSUMER span (`process <topic>`) that continues that trace, in this process or
 * another. With tracing off both are no-ops and no header is added. A delivery the adapter
 * refuses before any handler sees it (a payload that does not parse) is dead-lettered and logged
 * by the adapter, not reported here.
 */
export class ObservedBus implements Bus {
  private readonly groups = new Set<string>();
  /** messaging.system: the broker's name, or Locus's own in-process bus. */
  private readonly system: string;

  constructor(
    private readonly bus: Bus,
    private readonly observer: BusObserver,
  ) {
    this.system = bus instanceof RabbitMqBus ? "rabbitmq" : "locus_in_process";
  }

  async publish<T extends Topic>(topic: T, message: MessageOf<T>, options?: PublishOptions): Promise<void> {
    if (UNTRACED.has(topic)) {
      await this.bus.publish(topic, message, options);
    } else {
      await inSpan(
        `publish ${topic}`,
        {
          kind: SpanKind.PRODUCER,
          attributes: {
            [Attr.messagingSystem]: this.system,
            [Attr.messagingOperation]: "send",
            [Attr.messagingDestination]: topic,
            [Attr.fileId]: message.fileId,
          },
        },
        () =>
          this.bus.publish(topic, message, {
            ...options,
            headers: { ...options?.headers, ...traceHeaders() },
          }),
      );
    }
    this.observer.messagePublished(topic);
  }

  subscribe<T extends Topic>(options: SubscribeOptions<T>, handler: Handler<T>): Promise<void> {
    this.groups.add(options.group);
    const subscribed: SubscribeOptions<T> = {
      ...options,
      // The adapter dead-letters an abandoned message without the handler below: counted here too,
      // whether or not the subscriber has a hook of its own.
      abandon: async (delivery, reason) => {
        await options.abandon?.(delivery, reason);
        this.observer.deliveryAbandoned(delivery.topic, options.group);
      },
    };
    return this.bus.subscribe(subscribed, async (delivery) => {
      const started = performance.now();
      const age =
        delivery.publishedAt === undefined
          ? undefined
          : Math.max(0, Date.now() - delivery.publishedAt) / 1000;
      this.observer.deliveryStarted(delivery.topic, options.group, age);
      const ended = (outcome: DeliveryOutcome) =>
        this.observer.deliveryEnded(
          delivery.topic,
          options.group,
          outcome,
          (performance.now() - started) / 1000,
        );
      try {
        if (UNTRACED.has(delivery.topic)) {
          await handler(delivery);
        } else {
          await inSpan(
            `process ${delivery.topic}`,
            {
              kind: SpanKind.CONSUMER,
              // The publisher's span, from the message's headers (none: a trace of its own).
              parent: contextFrom(delivery.headers),
              attributes: {
                [Attr.messagingSystem]: this.system,
                [Attr.messagingOperation]: "process",
                [Attr.messagingDestination]: delivery.topic,
                [Attr.messagingGroup]: options.group,
                [Attr.deliveryAttempt]: delivery.attempt,
                [Attr.fileId]: delivery.message.fileId,
              },
            },
            () => handler(delivery),
          );
        }
      } catch (err) {
        const outcome = stoppedForClose(delivery.signal, err)
          ? "handed_back"
          : delivery.final
            ? "dead_lettered"
            : "retried";
        ended(outcome);
        throw err;
      }
      ended("handled");
    });
  }

  check(): Promise<void> {
    return this.bus.check();
  }

  queueDepth(group: string): Promise<number> {
    return this.bus.queueDepth(group);
  }

  /** The consumer groups this process subscribed, whose queues its metrics report. */
  subscribedGroups(): string[] {
    return [...this.groups];
  }

  close(): Promise<void> {
    return this.bus.close();
  }
}
