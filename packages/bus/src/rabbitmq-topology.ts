// What the bus declares on the broker: each consumer group's queues (work, retry, dead letters),
// bound to the topic exchange, and the headers its messages carry.

import type { Channel } from "amqplib";
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
 * Declares a group's queue, bound to the exchange with each of its topics, its retry queue (which
 * dead-letters expired messages back to the queue through the default exchange) and its dead
 * letters. Idempotent: the queues are durable.
 */
export async function declareGroupQueues(
  channel: Channel,
  exchange: string,
  queues: GroupQueues,
  topics: readonly Topic[],
): Promise<void> {
  const { queue, retry, dead } = queues;
  await channel.assertQueue(queue, { durable: true });
  for (const topic of topics) await channel.bindQueue(queue, exchange, topic);
  await channel.assertQueue(retry, {
    durable: true,
    deadLetterExchange: "",
    deadLetterRoutingKey: queue,
  });
  await channel.assertQueue(dead, { durable: true });
}
