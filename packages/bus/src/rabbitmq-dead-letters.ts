// An operator's view of a consumer group's dead letters on RabbitMQ: reading them without taking
// them, and handing them back to the group's queue for a fresh set of attempts.

import type { ChannelModel, ConfirmChannel, GetMessage } from "amqplib";
import {
  AttemptHeader,
  CONTENT_TYPE,
  GroupHeader,
  ReasonHeader,
  withConfirmChannel,
  type GroupQueues,
} from "./rabbitmq-topology.ts";

/** One dead-lettered message, as `locus dead-letters list` shows it. */
export interface DeadLetterRecord {
  group: string;
  topic: string;
  messageId: string | undefined;
  /** The attempts it had used, and why the last one failed. */
  attempt: number;
  reason: string;
  /** When it was first published (to the second), when known. */
  publishedAt: string | undefined;
  /** The message itself (ids only: no message carries a file's content). */
  payload: unknown;
}

const header = (msg: GetMessage, name: string): unknown => msg.properties.headers?.[name];

/**
 * Why it is here: the consumer's reason header, or, for a message the broker dead-lettered itself
 * (a quorum queue's delivery limit, the backstop when even abandoning it failed), the broker's.
 */
function reasonOf(msg: GetMessage): string {
  const reason = header(msg, ReasonHeader);
  if (typeof reason === "string") return reason;
  const brokerReason = header(msg, "x-first-death-reason");
  if (brokerReason === "delivery_limit") {
    return "the broker's delivery limit: every worker that took it stopped before answering";
  }
  return typeof brokerReason === "string" ? `dead-lettered by the broker (${brokerReason})` : "";
}

function recordOf(msg: GetMessage, group: string): DeadLetterRecord {
  let payload: unknown;
  try {
    payload = JSON.parse(msg.content.toString("utf8"));
  } catch {
    payload = msg.content.toString("utf8").slice(0, 200);
  }
  const attempt = Number(header(msg, AttemptHeader));
  const timestamp: unknown = msg.properties.timestamp;
  return {
    group: typeof header(msg, GroupHeader) === "string" ? (header(msg, GroupHeader) as string) : group,
    topic: typeof msg.properties.type === "string" ? msg.properties.type : msg.fields.routingKey,
    messageId: typeof msg.properties.messageId === "string" ? msg.properties.messageId : undefined,
    attempt: Number.isInteger(attempt) ? attempt : 1,
    reason: reasonOf(msg),
    publishedAt: typeof timestamp === "number" ? new Date(timestamp * 1000).toISOString() : undefined,
    payload,
  };
}

/** Takes up to `limit` dead letters one at a time, unacked, handing each to `take`. */
async function eachDeadLetter(
  channel: ConfirmChannel,
  queues: GroupQueues,
  limit: number,
  take: (msg: GetMessage) => Promise<void>,
): Promise<void> {
  for (let taken = 0; taken < limit; taken++) {
    const msg = await channel.get(queues.dead, { noAck: false });
    if (msg === false) return;
    await take(msg);
  }
}

/**
 * Up to `limit` of the group's dead letters, oldest first. Each is taken and then handed back
 * (a nack with requeue, which RabbitMQ puts back where it was), so reading changes nothing.
 */
export function peekDeadLetters(
  connection: ChannelModel,
  queues: GroupQueues,
  group: string,
  limit: number,
): Promise<DeadLetterRecord[]> {
  return withConfirmChannel(connection, async (channel) => {
    const records: DeadLetterRecord[] = [];
    await eachDeadLetter(channel, queues, limit, (msg) => {
      records.push(recordOf(msg, group));
      return Promise.resolve();
    });
    channel.nackAll(true);
    return records;
  });
}

/**
 * Moves up to `limit` of the group's dead letters back to its queue, as new: attempt 1, the same
 * message id, topic and publish time. Each dead letter is acked only once its copy is confirmed,
 * so a failure midway loses nothing (at worst a message is in both queues: handlers are idempotent).
 * `beforeEach` runs before a letter goes back (the CLI reopens the failed file it names, whose
 * status no late report may otherwise change).
 */
export function replayDeadLetters(
  connection: ChannelModel,
  queues: GroupQueues,
  group: string,
  limit: number,
  beforeEach?: (letter: DeadLetterRecord) => Promise<void>,
): Promise<DeadLetterRecord[]> {
  return withConfirmChannel(connection, async (channel) => {
    const replayed: DeadLetterRecord[] = [];
    await eachDeadLetter(channel, queues, limit, async (msg) => {
      const record = recordOf(msg, group);
      await beforeEach?.(record);
      channel.sendToQueue(queues.queue, msg.content, {
        persistent: true,
        contentType:
          typeof msg.properties.contentType === "string" ? msg.properties.contentType : CONTENT_TYPE,
        ...(record.messageId ? { messageId: record.messageId } : {}),
        ...(typeof msg.properties.type === "string" ? { type: msg.properties.type } : {}),
        ...(typeof msg.properties.timestamp === "number" ? { timestamp: msg.properties.timestamp } : {}),
        headers: { [AttemptHeader]: 1 },
      });
      await channel.waitForConfirms();
      channel.ack(msg);
      replayed.push(record);
    });
    return replayed;
  });
}
