// The machine a run measured on, recorded in every report.
import { execFileSync } from "node:child_process";
import os from "node:os";

export interface Machine {
  nproc: number;
  totalMemoryGiB: number;
  cpuModel: string;
  node: string;
  platform: string;
  commit: string;
  /** 1-minute load average when the run started and when it ended: how busy the machine was. */
  loadAverage: { start: number; end: number };
}

function tryExec(cmd: string, args: string[]): string | null {
  try {
    return execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return null;
  }
}

export function machine(loadAtStart: number): Machine {
  const nproc = Number(tryExec("nproc", []) ?? os.availableParallelism());
  const commit = tryExec("git", ["rev-parse", "--short", "HEAD"]) ?? "unknown";
  const dirty = (tryExec("git", ["status", "--porcelain"]) ?? "") !== "";
  return {
    nproc,
    totalMemoryGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    cpuModel: os.cpus()[0]?.model.trim() ?? "unknown",
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    commit: dirty ? `${commit} (with uncommitted changes)` : commit,
    loadAverage: { start: loadAtStart, end: Math.round(os.loadavg()[0]! * 100) / 100 },
  };
}
