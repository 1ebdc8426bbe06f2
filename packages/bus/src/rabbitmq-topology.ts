// What the bus declares on the broker: each consumer group's queues (work, retry, dead letters),
// bound to the topic exchange, and the headers its messages carry.

import type { Channel, ChannelModel, ConfirmChannel } from "amqplib";
import type { Topic } from "@locus/contracts";

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

export const CONTENT_TYPE = "application/json";

/** Headers this adapter maintains. The topic travels in the `type` property: routing keys change on retry. */
export const AttemptHeader = "x-locus-attempt";
export const ReasonHeader = "x-locus-reason";
export const GroupHeader = "x-locus-group";

// Channel-level errors that mean our request is wrong (topology declared differently elsewhere,
// access refused), not that the connection went away: retrying cannot help.
export const PERMANENT_CHANNEL_ERRORS = new Set([403, 404, 405, 406]);

/**
 * Runs `work` on a confirm channel of its own, closed after (its unacked messages go back). A
 * channel the broker closes (a refused declaration) rejects `work`'s pending call, never the process.
 */
export async function withConfirmChannel<R>(
  connection: ChannelModel,
  work: (channel: ConfirmChannel) => Promise<R>,
): Promise<R> {
  const channel = await connection.createConfirmChannel();
  channel.on("error", () => undefined);
  try {
    return await work(channel);
  } finally {
    await channel.close().catch(() => undefined);
  }
}

/**
 * What a group's work queue is on the broker. "quorum" (the default): replicated in a cluster, and
 * the broker counts the deliveries of each message that ended without an answer (a consumer that
 * crashed, was killed, or lost its connection), so a message that stops every worker that takes
 * it cannot loop for ever. "classic": the queues of deployments made before Locus used quorum
 * queues; RabbitMQ cannot change a queue's type, `locus bus migrate-queues` moves them over.
 */
export type QueueType = "quorum" | "classic";

export interface WorkQueueSettings {
  type: QueueType;
  /**
   * Deliveries of one message that may end without an answer before Locus gives up on it: the
   * consumer then fails its file (SubscribeOptions.abandon) and dead-letters it without running
   * the handler again. The broker allows one unanswered delivery more before it dead-letters the
   * message itself: a backstop for when even abandoning fails (the consumer then requeues it).
   */
  deliveryLimit: number;
  /**
   * How long a consumer may hold a delivery unanswered before the broker closes its channel
   * (`x-consumer-timeout`; honoured from RabbitMQ 3.12, older brokers read only their global
   * `consumer_timeout`, 30 minutes by default). It must outlast the longest work a group does (the
   * transcription of the longest allowed recording), or that work is cut and redelivered until abandoned.
   */
  consumerTimeoutMs?: number;
}

export const DEFAULT_WORK_QUEUE: WorkQueueSettings = { type: "quorum", deliveryLimit: 5 };

/** The header a quorum queue adds: the deliveries of this message that ended without an answer. */
export const DeliveryCountHeader = "x-delivery-count";

/** The arguments of a group's quorum work queue. */
export function quorumQueueArguments(
  queues: GroupQueues,
  settings: WorkQueueSettings,
): Record<string, unknown> {
  return {
    "x-queue-type": "quorum",
    "x-delivery-limit": settings.deliveryLimit + 1,
    // When the broker's backstop drops a message, it goes to the group's dead letters, confirmed
    // there before it leaves the queue (at-least-once dead-lettering needs reject-publish overflow).
    "x-dead-letter-exchange": "",
    "x-dead-letter-routing-key": queues.dead,
    "x-dead-letter-strategy": "at-least-once",
    "x-overflow": "reject-publish",
    ...(settings.consumerTimeoutMs === undefined ? {} : { "x-consumer-timeout": settings.consumerTimeoutMs }),
  };
}

/** What declaring a work queue found: its type, and a sentence for the log when it is not as asked. */
export interface DeclaredWorkQueue {
  type: QueueType;
  note?: string;
}

const MIGRATE_ADVICE = "stop its consumers and run `pnpm locus bus migrate-queues` to make it a quorum queue";

/**
 * Declares a group's work queue as `settings` asks, on a channel of its own: a declaration that
 * disagrees with the queue on the broker closes its channel (406). A queue that exists with
 * another type or other arguments is used as it is, and the answer says so: a deployment made
 * before quorum queues keeps working until an operator migrates it.
 */
export async function declareWorkQueue(
  connection: ChannelModel,
  queues: GroupQueues,
  settings: WorkQueueSettings,
): Promise<DeclaredWorkQueue> {
  const declare = async (options: Parameters<Channel["assertQueue"]>[1] | "passive"): Promise<void> => {
    const channel = await connection.createChannel();
    // The broker closes a channel whose declaration disagrees; the rejected promise says why.
    channel.on("error", () => undefined);
    try {
      if (options === "passive") await channel.checkQueue(queues.queue);
      else await channel.assertQueue(queues.queue, options);
    } finally {
      await channel.close().catch(() => undefined);
    }
  };
  if (settings.type === "classic") {
    await declare({ durable: true });
    return { type: "classic" };
  }
  try {
    await declare({ durable: true, arguments: quorumQueueArguments(queues, settings) });
    return { type: "quorum" };
  } catch (err) {
    if ((err as { code?: number }).code !== 406) throw err;
  }
  // RabbitMQ names only the first argument that differs, so ask again as older Locus declared it.
  try {
    await declare({ durable: true });
    return {
      type: "classic",
      note: `${queues.queue} is a classic queue, where a message that crashes every worker is redelivered for ever; ${MIGRATE_ADVICE}`,
    };
  } catch (err) {
    if ((err as { code?: number }).code !== 406) throw err;
  }
  // A quorum queue declared with another delivery limit (queue arguments never change): Locus's
  // own limit still applies; the broker's backstop stays as it was.
  await declare("passive");
  return {
    type: "quorum",
    note: `${queues.queue} exists with other arguments than this process declares (another LOCUS_BUS_DELIVERY_LIMIT?); it is used as it is`,
  };
}

/**
 * Declares a group's work queue (see declareWorkQueue), bound to the exchange with each of its
 * topics, its retry queue (which dead-letters expired messages back to the work queue through the
 * default exchange) and its dead letters. Idempotent: the queues are durable.
 *
 * The retry and dead queues are classic queues, by decision (README, "Operating the split shape"):
 * - neither needs what quorum queues bring to the work queue: no consumer ever takes from the retry
 *   queue (the broker moves each message on when its TTL ends), and only operators read the dead
 *   letters, so there is no delivery to count and no crash-loop to stop;
 * - a classic queue is RabbitMQ's plain place for a per-message-TTL delay, on every broker version
 *   Locus supports; dead letters arrive there confirmed (the work queue's at-least-once
 *   dead-lettering works into a queue of any type);
 * - a queue's type cannot change: quorum ones would make every existing deployment's declaration
 *   fail (PRECONDITION_FAILED) until each group's two queues were migrated, messages and all.
 * The cost, in a cluster: each lives on one node, so while that node is down its retries wait, and
 * losing its disk loses what it held. Declared without x-queue-type, as Locus always has, so an
 * existing queue is always taken as it is. packages/bus/test/rabbitmq-topology.test.ts pins this.
 */
export async function declareGroupQueues(
  connection: ChannelModel,
  channel: Channel,
  exchange: string,
  queues: GroupQueues,
  topics: readonly Topic[],
  settings: WorkQueueSettings,
): Promise<DeclaredWorkQueue> {
  const { queue, retry, dead } = queues;
  const declared = await declareWorkQueue(connection, queues, settings);
  for (const topic of topics) await channel.bindQueue(queue, exchange, topic);
  // Classic (see above): no x-queue-type, the broker's default.
  await channel.assertQueue(retry, {
    durable: true,
    deadLetterExchange: "",
    deadLetterRoutingKey: queue,
  });
  await channel.assertQueue(dead, { durable: true });
  return declared;
}
