import { randomUUID } from "node:crypto";
import amqp from "amqplib";
import type { ChannelModel } from "amqplib";
import {
  declareGroupQueues,
  DEFAULT_WORK_QUEUE,
  groupQueues,
  quorumQueueArguments,
} from "../src/rabbitmq-topology.ts";

// Real RabbitMQ (CI starts it): the broker itself says what type each queue is.
const AMQP_URL = process.env.AMQP_URL ?? "amqp://guest:guest@127.0.0.1:5672";

let connection: ChannelModel;
beforeAll(async () => {
  connection = await amqp.connect(AMQP_URL, { timeout: 5_000 });
});
afterAll(async () => {
  await connection?.close();
});

/**
 * The queue's type on the broker: declared again with its arguments (RabbitMQ refuses a
 * declaration whose arguments differ from the queue's) and a type, it refuses (406) the wrong type.
 */
async function queueType(name: string, args: Record<string, unknown> = {}): Promise<"classic" | "quorum"> {
  for (const type of ["classic", "quorum"] as const) {
    const channel = await connection.createChannel();
    channel.on("error", () => undefined);
    try {
      await channel.assertQueue(name, { durable: true, arguments: { ...args, "x-queue-type": type } });
      await channel.close();
      return type;
    } catch (err) {
      if ((err as { code?: number }).code !== 406) throw err;
    }
  }
  throw new Error(`${name}: neither classic nor quorum`);
}

describe("a consumer group's queues on the broker", () => {
  it("the work queue is a quorum queue; its retry and dead-letter queues are classic (README: Operating the split shape)", async () => {
    const queues = groupQueues("indexer", `test-${randomUUID().slice(0, 8)}.`);
    const exchange = `${queues.queue}.events`;
    const channel = await connection.createChannel();
    try {
      await channel.assertExchange(exchange, "topic", { durable: false, autoDelete: true });
      await declareGroupQueues(connection, channel, exchange, queues, ["file.extracted"], DEFAULT_WORK_QUEUE);
      expect({
        work: await queueType(queues.queue, quorumQueueArguments(queues, DEFAULT_WORK_QUEUE)),
        retry: await queueType(queues.retry, {
          "x-dead-letter-exchange": "",
          "x-dead-letter-routing-key": queues.queue,
        }),
        dead: await queueType(queues.dead),
      }).toEqual({ work: "quorum", retry: "classic", dead: "classic" });
      // Declared again, as every start of a process does: the same queues, no refusal.
      await declareGroupQueues(connection, channel, exchange, queues, ["file.extracted"], DEFAULT_WORK_QUEUE);
    } finally {
      for (const q of [queues.queue, queues.retry, queues.dead]) await channel.deleteQueue(q);
      await channel.deleteExchange(exchange);
      await channel.close();
    }
  });
});
