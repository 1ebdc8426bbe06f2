/**
 * Where the CPU time goes during a measurement, from Linux's /proc: each Locus process by pid, the
 * infrastructure by process name (Postgres, RabbitMQ, Redis), this benchmark process, and the
 * whole machine. Without /proc (not Linux), every figure is null and the benchmarks still run.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import os from "node:os";

/** Infrastructure processes by their /proc/<pid>/comm name. */
const INFRASTRUCTURE: Record<string, string[]> = {
  postgres: ["postgres"],
  rabbitmq: ["beam.smp", "erl_child_setup", "inet_gethost", "epmd"],
  redis: ["redis-server"],
};

let ticksPerSecond: number | undefined;
function ticks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** User + system CPU seconds a process has used, or null when it is gone. */
function processCpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: count fields after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / ticks();
  } catch {
    return null;
  }
}

/** CPU seconds by pid of every process whose name is in `names`. */
function processesNamed(names: ReadonlySet<string>): Map<number, number> {
  const found = new Map<number, number>();
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((d) => /^\d+$/.test(d));
  } catch {
    return found;
  }
  for (const dir of pids) {
    try {
      if (!names.has(readFileSync(`/proc/${dir}/comm`, "utf8").trim())) continue;
    } catch {
      continue; // exited meanwhile
    }
    const cpu = processCpuSeconds(Number(dir));
    if (cpu !== null) found.set(Number(dir), cpu);
  }
  return found;
}

/** Busy and total CPU seconds of the whole machine (all cores) since boot. */
function machineCpuSeconds(): { busy: number; total: number } | null {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n")[0]!;
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already counted in user).
    const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
    const idle = (v[3] ?? 0) + (v[4] ?? 0);
    return { busy: (total - idle) / ticks(), total: total / ticks() };
  } catch {
    return null;
  }
}

export interface CpuSnapshot {
  at: number;
  groups: Map<string, { pids: number[]; cpu: number | null }>;
  infrastructure: Map<string, Map<number, number>>;
  self: NodeJS.CpuUsage;
  machine: { busy: number; total: number } | null;
}

/** `groups`: Locus processes by the name to report them under (one or more pids each). */
export function cpuSnapshot(groups: ReadonlyMap<string, readonly number[]>): CpuSnapshot {
  const infrastructure = new Map<string, Map<number, number>>();
  for (const [group, names] of Object.entries(INFRASTRUCTURE))
    infrastructure.set(group, processesNamed(new Set(names)));
  const sum = (pids: readonly number[]) => {
    let total = 0;
    for (const pid of pids) {
      const cpu = processCpuSeconds(pid);
      if (cpu === null) return null;
      total += cpu;
    }
    return total;
  };
  return {
    at: performance.now(),
    groups: new Map([...groups].map(([name, pids]) => [name, { pids: [...pids], cpu: sum(pids) }])),
    infrastructure,
    self: process.cpuUsage(),
    machine: machineCpuSeconds(),
  };
}

/** The key under which cpuBetween reports what no named process accounts for. */
export const REST_OF_MACHINE = "rest of the machine";

export interface CpuUsage {
  wallSeconds: number;
  /**
   * CPU seconds used in the interval: by Locus process group, infrastructure server, "benchmark"
   * (this process), and REST_OF_MACHINE (every other process and the kernel). Null where unknown.
   */
  seconds: Record<string, number | null>;
  /** Average cores busy over the interval on the whole machine (out of `cores`), or null. */
  machineBusyCores: number | null;
  cores: number;
}

const r2 = (v: number) => Math.round(v * 100) / 100;
const samePids = (a: readonly number[], b: readonly number[]) =>
  a.length === b.length && a.every((p, i) => p === b[i]);

/** CPU used between two snapshots. A group whose pids changed (a restart) is null. */
export function cpuBetween(before: CpuSnapshot, after: CpuSnapshot): CpuUsage {
  const seconds: Record<string, number | null> = {};
  for (const [name, end] of after.groups) {
    const start = before.groups.get(name);
    seconds[name] =
      start && samePids(start.pids, end.pids) && start.cpu !== null && end.cpu !== null
        ? end.cpu - start.cpu
        : null;
  }
  for (const [group, end] of after.infrastructure) {
    const start = before.infrastructure.get(group) ?? new Map<number, number>();
    // A process that started in the interval counts from zero; one that ended in it is missed.
    let sum = 0;
    for (const [pid, cpu] of end) sum += cpu - (start.get(pid) ?? 0);
    seconds[group] = end.size > 0 ? sum : null;
  }
  seconds.benchmark = (after.self.user - before.self.user + after.self.system - before.self.system) / 1e6;
  const wallSeconds = (after.at - before.at) / 1000;
  const busy = before.machine && after.machine ? after.machine.busy - before.machine.busy : null;
  const known = Object.values(seconds);
  seconds[REST_OF_MACHINE] =
    busy !== null && known.every((v) => v !== null)
      ? Math.max(0, busy - known.reduce<number>((a, b) => a + (b ?? 0), 0))
      : null;
  for (const [k, v] of Object.entries(seconds)) seconds[k] = v === null ? null : r2(v);
  return {
    wallSeconds: r2(wallSeconds),
    seconds,
    machineBusyCores: busy === null ? null : r2(busy / wallSeconds),
    cores: os.availableParallelism(),
  };
}
