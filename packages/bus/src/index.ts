export * from "./bus.ts";
export { DEFAULT_HEARTBEAT_MS, startHeartbeat } from "./heartbeat.ts";
export { abandonFile, giveUpOnFile, type GiveUp } from "./give-up.ts";
export { InProcessBus, type DeadLetter } from "./in-process-bus.ts";
export {
  RabbitMqBus,
  groupQueues,
  AttemptHeader,
  GroupHeader,
  ReasonHeader,
  QueueInUseError,
  type GroupQueues,
  type QueueMigration,
  type QueueType,
  type RabbitMqBusOptions,
  type WorkQueueSettings,
} from "./rabbitmq-bus.ts";
export type { DeadLetterRecord } from "./rabbitmq-dead-letters.ts";
export { ObservedBus, type BusObserver, type DeliveryOutcome } from "./observed-bus.ts";
