// A bus that reports what passes through it (for metrics), around either adapter.

import type { MessageOf, Topic } from "@locus/contracts";
import type { Bus, Handler, SubscribeOptions } from "./bus.ts";

/** How one delivery ended: handled, handed back for another attempt, or given up (dead letters). */
export type DeliveryOutcome = "handled" | "retried" | "dead_lettered";

/** What a bus tells whoever counts: each message published, and how each delivery ended. */
export interface BusObserver {
  messagePublished(topic: Topic): void;
  /** A delivery starts, `ageSeconds` after its message was first published (when known). */
  deliveryStarted(topic: Topic, group: string, ageSeconds: number | undefined): void;
  deliveryEnded(topic: Topic, group: string, outcome: DeliveryOutcome, seconds: number): void;
}

/**
 * `bus`, reporting to `observer`. A delivery the adapter refuses before any handler sees it (a
 * payload that does not parse) is dead-lettered and logged by the adapter, not reported here.
 */
export class ObservedBus implements Bus {
  private readonly groups = new Set<string>();

  constructor(
    private readonly bus: Bus,
    private readonly observer: BusObserver,
  ) {}

  async publish<T extends Topic>(topic: T, message: MessageOf<T>): Promise<void> {
    await this.bus.publish(topic, message);
    this.observer.messagePublished(topic);
  }

  subscribe<T extends Topic>(options: SubscribeOptions<T>, handler: Handler<T>): Promise<void> {
    this.groups.add(options.group);
    return this.bus.subscribe(options, async (delivery) => {
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
        await handler(delivery);
      } catch (err) {
        ended(delivery.final ? "dead_lettered" : "retried");
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
