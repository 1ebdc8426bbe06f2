import { MessageSchemas, type MessageOf, type Topic } from "@locus/contracts";
import type { Bus } from "@locus/bus";
import type { OutboxEntry, OutboxStore } from "@locus/metadata-store";
import type { Logger } from "@locus/runtime";

export interface OutboxRelayOptions {
  /**
   * How often due entries are looked for: what a process that died left, what the bus refused, an
   * upload whose request never completed.
   */
  pollMs: number;
  /**
   * How long a claimed entry is left to its relay before another may publish it (its publication
   * failed, or its process died): the retry delay after a failed publication.
   */
  leaseMs: number;
  /** Entries claimed per pass. */
  batch: number;
}

export const DEFAULT_OUTBOX_RELAY: OutboxRelayOptions = { pollMs: 1_000, leaseMs: 10_000, batch: 50 };

const isTopic = (topic: string): topic is Topic => Object.hasOwn(MessageSchemas, topic);

/**
 * Hands the outbox's due entries to the bus (see OutboxStore), in every files process: each entry
 * is claimed before it is published and removed once the bus has it, so an entry whose process
 * died, or that the bus refused, is published again by whichever relay looks next. A message may
 * thus be published twice (it was published, and its removal was lost); every consumer is
 * idempotent. Passes never overlap. An upload's own process publishes its entry as soon as the
 * request completes (publishClaimed): the relay is for what that process could not.
 */
export class OutboxRelay {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(
    private readonly store: OutboxStore,
    private readonly bus: Bus,
    private readonly logger: Logger,
    private readonly onPublishFailed: (topic: string) => void = () => undefined,
    private readonly options: OutboxRelayOptions = DEFAULT_OUTBOX_RELAY,
  ) {}

  start(): void {
    this.stopped = false;
    this.timer = setInterval(() => this.wake(), this.options.pollMs);
    this.timer.unref();
    this.wake();
  }

  /** Runs a pass now, or right after the one under way. */
  private wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.passes().finally(() => {
      this.running = undefined;
    });
  }

  /** Resolves once no pass is under way (for tests and an orderly stop). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.idle();
  }

  private async passes(): Promise<void> {
    do {
      this.again = false;
      try {
        // A full batch may mean more are due: look again at once.
        while ((await this.pass()) === this.options.batch && !this.stopped);
      } catch (err) {
        this.logger.error({ err }, "outbox relay pass failed; the next pass tries again");
      }
    } while (this.again && !this.stopped);
  }

  private async pass(): Promise<number> {
    const now = Date.now();
    const entries = await this.store.claimDueOutboxEntries(
      new Date(now).toISOString(),
      this.leaseUntil(now),
      this.options.batch,
    );
    for (const entry of entries) await this.publish(entry);
    return entries.length;
  }

  /** When an entry claimed now is due again if it was not published. */
  leaseUntil(now = Date.now()): string {
    return new Date(now + this.options.leaseMs).toISOString();
  }

  /**
   * Publishes entries claimed by their own process (an upload's, when its request completes) and
   * removes them; one the bus refuses is published by a relay once its lease is over. Never throws.
   */
  async publishClaimed(entries: readonly OutboxEntry[]): Promise<void> {
    for (const entry of entries) {
      try {
        await this.publish(entry);
      } catch (err) {
        // Published, but not removed (the database is away): a relay publishes it again later.
        this.logger.warn({ err, fileId: entry.fileId }, "could not remove a published outbox entry");
      }
    }
  }

  private async publish(entry: OutboxEntry): Promise<void> {
    if (!isTopic(entry.topic)) {
      // Written by a newer version that knows a topic this one does not: left for it.
      this.logger.error({ entryId: entry.id, topic: entry.topic }, "outbox entry of an unknown topic left");
      return;
    }
    if (!MessageSchemas[entry.topic].safeParse(entry.message).success) {
      // It can never be published: kept, it would be tried forever. The stall sweep still finds
      // its file.
      this.onPublishFailed(entry.topic);
      this.logger.error(
        { entryId: entry.id, fileId: entry.fileId, topic: entry.topic },
        "invalid outbox entry dropped",
      );
      await this.store.deleteOutboxEntry(entry.id);
      return;
    }
    try {
      await this.bus.publish(entry.topic, entry.message as MessageOf<Topic>);
    } catch (err) {
      this.onPublishFailed(entry.topic);
      this.logger.warn(
        { err, fileId: entry.fileId, topic: entry.topic, attempt: entry.attempts },
        `could not publish; published again in ${Math.round(this.options.leaseMs / 1000)} s`,
      );
      return;
    }
    await this.store.deleteOutboxEntry(entry.id);
  }
}
