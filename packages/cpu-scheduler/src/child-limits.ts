import type { ChildProcess } from "node:child_process";
import { killProcessTree } from "./kill-process-tree.ts";
import { procCpuAvailable } from "./proc-stat.ts";
import { readProcessTreeCpu } from "./process-cpu.ts";

/** What a child process may use before it is killed. */
export interface ChildLimitOptions {
  /**
   * Processor time (user + system, the whole process tree) it may use, in milliseconds. Infinity
   * for none (its time is still read, for {@link ChildLimit.cpuMs}).
   */
  cpuMs: number;
  /**
   * Longest it may run, waiting included, in milliseconds: a ceiling for a true hang (a child
   * blocked forever uses no CPU), generous enough that a busy machine never reaches it. Infinity
   * for none.
   */
  wallMs: number;
  /** How often its processor time is read; 250 ms unless told. */
  pollMs?: number;
}

/** Why a child was killed: over its processor budget, or past its wall-clock ceiling. */
export type LimitStopReason = "cpu" | "wall";

/** A child process held to its limits (see {@link limitChild}). */
export interface ChildLimit {
  /** Why the limit killed the child, or undefined if it has not. */
  stoppedFor(): LimitStopReason | undefined;
  /** The processor time the child's tree had used at the last reading, in milliseconds. */
  cpuMs(): number;
  /** A sentence saying why the child was killed, or undefined if it was not. */
  stopDescription(): string | undefined;
  /** Stops watching the child. Call it when the child closes; calling it again does nothing. */
  dispose(): void;
}

const DEFAULT_POLL_MS = 250;
/** Node fires a longer timer at once (with a warning) rather than never: about 24.8 days. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/**
 * Holds a child process to a budget of processor time, with a wall-clock ceiling for hangs.
 *
 * A wall-clock timeout alone kills children on a busy machine merely for waiting their turn for a
 * core; processor time counts only the work they do. Every `pollMs` the CPU time of the child and
 * all its descendants is read from /proc; when it passes `cpuMs`, or when `wallMs` has passed, the
 * whole tree is killed (SIGKILL) and {@link ChildLimit.stoppedFor} says why. Where /proc is not
 * available (not Linux), only the wall-clock ceiling applies.
 *
 * Polling stops by itself when the child exits; call {@link ChildLimit.dispose} on close all the
 * same. Its timers never keep the process alive, and it never throws for a child that has already
 * exited or never started.
 */
export function limitChild(child: ChildProcess, limits: ChildLimitOptions): ChildLimit {
  let stopReason: LimitStopReason | undefined;
  let lastCpuMs = 0;
  const timers: { poller?: NodeJS.Timeout; ceiling?: NodeJS.Timeout } = {};

  // Node reaps its child and sets exitCode or signalCode in the same callback, so while both are
  // null the pid is still this child's and cannot have been reused.
  const running = () => child.pid !== undefined && child.exitCode === null && child.signalCode === null;

  const dispose = () => {
    clearInterval(timers.poller);
    clearTimeout(timers.ceiling);
    child.off("exit", dispose);
  };

  const stop = (reason: LimitStopReason) => {
    if (stopReason !== undefined || !running()) return;
    stopReason = reason;
    dispose();
    // The time used up to the kill, for the sentence that reports it.
    if (reason === "wall") readCpu();
    killProcessTree(child.pid!);
  };

  const readCpu = () => {
    const tree = readProcessTreeCpu(child.pid!);
    // A descendant reaped between two readings can be missed by one of them: keep the highest.
    if (tree) lastCpuMs = Math.max(lastCpuMs, tree.cpuMs);
  };

  const sample = () => {
    if (!running()) {
      dispose();
      return;
    }
    readCpu();
    if (lastCpuMs > limits.cpuMs) stop("cpu");
  };

  const watching = {
    stoppedFor: () => stopReason,
    cpuMs: () => lastCpuMs,
    stopDescription: () =>
      stopReason === undefined
        ? undefined
        : describeLimitStop({ reason: stopReason, usedCpuMs: lastCpuMs, limits }),
    dispose,
  };
  if (!running()) return watching;

  child.once("exit", dispose);
  if (procCpuAvailable()) {
    timers.poller = setInterval(sample, limits.pollMs ?? DEFAULT_POLL_MS).unref();
  }
  if (limits.wallMs < Infinity) {
    timers.ceiling = setTimeout(() => stop("wall"), Math.min(limits.wallMs, LONGEST_TIMER_MS)).unref();
  }
  return watching;
}

/** Seconds for a sentence: "0.52", "12.3", "600". */
function seconds(ms: number): string {
  const s = ms / 1000;
  return String(Number(s.toFixed(s < 10 ? 2 : 1)));
}

/**
 * Says why a child was killed, for an extraction's error: "used 12.3 s of processor time, over its
 * budget of 10 s", or "ran for 600 s without finishing (a hang)".
 */
export function describeLimitStop(stop: {
  reason: LimitStopReason;
  usedCpuMs: number;
  limits: Pick<ChildLimitOptions, "cpuMs" | "wallMs">;
}): string {
  switch (stop.reason) {
    case "cpu":
      return `used ${seconds(stop.usedCpuMs)} s of processor time, over its budget of ${seconds(stop.limits.cpuMs)} s`;
    case "wall":
      return `ran for ${seconds(stop.limits.wallMs)} s without finishing (a hang)`;
  }
}
