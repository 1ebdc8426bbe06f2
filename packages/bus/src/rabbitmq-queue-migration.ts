// Moving a consumer group's classic work queue to a quorum queue of the same name, without losing
// a message. RabbitMQ cannot change a queue's type, and a declaration of another type is refused,
// so the queue has to be emptied, deleted and declared again, while publishers go on publishing.

import type { ChannelModel, ConfirmChannel } from "amqplib";
import type { Topic } from "@locus/contracts";
import {
  DeliveryCountHeader,
  declareWorkQueue,
  quorumQueueArguments,
  withConfirmChannel,
  type GroupQueues,
  type WorkQueueSettings,
} from "./rabbitmq-topology.ts";

/** What `locus bus migrate-queues` did to one group's work queue. */
export interface QueueMigration {
  group: string;
  queue: string;
  /** "migrated": was classic, now quorum; "quorum": nothing to do; "absent": declared on next start. */
  outcome: "migrated" | "quorum" | "absent";
  /** Messages moved into the new queue (those waiting in the classic queue, and those published meanwhile). */
  moved: number;
}

/** Refused: consumers still read the queue, and would declare it again as it was. */
export class QueueInUseError extends Error {}

/**
 * Migrates one group's work queue to a quorum queue. Its consumers must be stopped (scaled to
 * zero): a consumer of an older Locus would declare the classic queue again. Publishers may run:
 *
 *   1. a holding quorum queue `<queue>.migrating` is bound with the group's topics, and the classic
 *      queue unbound, so every new message lands in the holding queue;
 *   2. the classic queue's messages are moved to the holding queue (each acked once its copy is
 *      confirmed), and the empty classic queue deleted;
 *   3. the quorum queue is declared under the old name and bound; the holding queue is unbound,
 *      its messages moved across the same way, and deleted.
 *
 * A crash midway loses nothing: every message sits in one of the queues, and running the
 * migration again finishes it (each step is idempotent).
 */
export async function migrateToQuorum(
  connection: ChannelModel,
  exchange: string,
  group: string,
  queues: GroupQueues,
  topics: readonly Topic[],
  settings: WorkQueueSettings,
): Promise<QueueMigration> {
  const holding = `${queues.queue}.migrating`;
  const existing = await queueState(connection, queues.queue);
  const holdingState = await queueState(connection, holding);
  if (existing === undefined && holdingState === undefined) {
    return { group, queue: queues.queue, outcome: "absent", moved: 0 };
  }
  if (existing) {
    const declared = await declareWorkQueue(connection, queues, { ...settings, type: "quorum" });
    // Quorum already, and no holding queue left behind by an interrupted run: nothing to do.
    if (declared.type === "quorum" && holdingState === undefined) {
      return { group, queue: queues.queue, outcome: "quorum", moved: 0 };
    }
    if (existing.consumerCount > 0) {
      throw new QueueInUseError(
        `${queues.queue} has ${existing.consumerCount} consumer(s): stop them (scale the ${group} deployment to 0) and run the migration again`,
      );
    }
    if (declared.type === "classic") {
      await withConfirmChannel(connection, async (channel) => {
        await channel.assertQueue(holding, {
          durable: true,
          arguments: quorumQueueArguments(queues, settings),
        });
        for (const topic of topics) await channel.bindQueue(holding, exchange, topic);
        for (const topic of topics) await channel.unbindQueue(queues.queue, exchange, topic);
        await moveAll(channel, queues.queue, holding);
        // ifEmpty: a message that arrived anyway is never deleted with the queue (the broker refuses).
        await channel.deleteQueue(queues.queue, { ifEmpty: true });
      });
    }
  }
  // A channel of its own: RabbitMQ 3.10 fails a channel that routes to a quorum queue under the
  // name of a classic queue the same channel used (an INTERNAL_ERROR that closes its connection).
  // Publishers' channels that routed to the classic queue do that once; the bus reconnects and
  // publishes again what was not confirmed.
  const moved = await withConfirmChannel(connection, async (channel) => {
    await channel.assertQueue(queues.queue, {
      durable: true,
      arguments: quorumQueueArguments(queues, settings),
    });
    for (const topic of topics) await channel.bindQueue(queues.queue, exchange, topic);
    if ((await queueState(connection, holding)) === undefined) return 0;
    for (const topic of topics) await channel.unbindQueue(holding, exchange, topic);
    const count = await moveAll(channel, holding, queues.queue);
    // Unbound, so nothing arrives any more. Quorum queues refuse if-empty deletes: ask first.
    const { messageCount } = await channel.checkQueue(holding);
    if (messageCount > 0)
      throw new Error(`${holding} still holds ${messageCount} message(s); run the migration again`);
    await channel.deleteQueue(holding);
    return count;
  });
  return { group, queue: queues.queue, outcome: "migrated", moved };
}

/** A queue's counts, or undefined when it does not exist (asked on a channel of its own: a 404 closes it). */
async function queueState(
  connection: ChannelModel,
  queue: string,
): Promise<{ messageCount: number; consumerCount: number } | undefined> {
  const channel = await connection.createChannel();
  channel.on("error", () => undefined);
  try {
    return await channel.checkQueue(queue);
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  } finally {
    await channel.close().catch(() => undefined);
  }
}

/** Moves every message of `from` to `to`, in order; each is acked only once its copy is confirmed. */
async function moveAll(channel: ConfirmChannel, from: string, to: string): Promise<number> {
  let moved = 0;
  for (;;) {
    const msg = await channel.get(from, { noAck: false });
    if (msg === false) return moved;
    // Properties as they were (topic, id, timestamp, attempt header); a quorum queue's delivery
    // count is the broker's own and is not carried.
    const { headers, ...properties } = msg.properties;
    const carried = Object.fromEntries(Object.entries(properties).filter(([, value]) => value !== undefined));
    const keptHeaders = { ...headers };
    delete keptHeaders[DeliveryCountHeader];
    channel.sendToQueue(to, msg.content, { ...carried, headers: keptHeaders, persistent: true });
    await channel.waitForConfirms();
    channel.ack(msg);
    moved += 1;
  }
}
