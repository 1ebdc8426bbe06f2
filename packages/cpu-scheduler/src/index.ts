export {
  FairScheduler,
  UNLIMITED,
  type CpuSlots,
  type FairSchedulerObserver,
  type FairSchedulerOptions,
  type FairSchedulerStats,
  type RunOptions,
} from "./fair-scheduler.ts";
export {
  describeLimitStop,
  limitChild,
  type ChildLimit,
  type ChildLimitOptions,
  type LimitStopReason,
} from "./child-limits.ts";
export { readProcessTreeCpu, type ProcessTreeCpu } from "./process-cpu.ts";
export { CLOCK_TICKS_PER_SECOND, procCpuAvailable } from "./proc-stat.ts";
export { killProcessTree } from "./kill-process-tree.ts";
export { stallWatched } from "./stall-watch.ts";
