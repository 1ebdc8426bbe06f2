export * from "./bus.ts";
export { InProcessBus, type DeadLetter } from "./in-process-bus.ts";
