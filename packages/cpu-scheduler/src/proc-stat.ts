import { existsSync, readFileSync } from "node:fs";

/**
 * Clock ticks per second, the unit of the times in /proc/<pid>/stat (USER_HZ). Node cannot call
 * sysconf(_SC_CLK_TCK), but Linux fixes USER_HZ at 100 in its user-space ABI on x86, x86-64, arm and
 * arm64 (whatever the kernel's internal HZ), which is what `getconf CLK_TCK` prints there.
 */
export const CLOCK_TICKS_PER_SECOND = 100;

/** The fields of /proc/<pid>/stat that CPU accounting needs, times in milliseconds. */
export interface ProcStat {
  pid: number;
  /** The process's state letter: R running, S sleeping, Z zombie (exited, not yet reaped), ... */
  state: string;
  ppid: number;
  /** CPU time the process itself has used, in user and kernel mode. */
  userMs: number;
  systemMs: number;
  /** CPU time of its children that have exited and that it has reaped (waited for), with theirs. */
  reapedChildrenUserMs: number;
  reapedChildrenSystemMs: number;
}

const ticksToMs = (ticks: string | undefined) => (Number(ticks) * 1000) / CLOCK_TICKS_PER_SECOND;

/**
 * Reads the text of /proc/<pid>/stat. The command name (field 2) is in parentheses and may itself
 * hold spaces and parentheses ("(sh) (x)"), so the fields are counted from after the LAST ')'.
 * Returns null when the text is not a stat line.
 */
export function parseProcStat(text: string): ProcStat | null {
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  if (open < 0 || close < open) return null;
  const pid = Number(text.slice(0, open).trim());
  // After the name: field 3 (state) at index 0, so field N is at index N - 3.
  const rest = text
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  const field = (n: number) => rest[n - 3];
  const stat: ProcStat = {
    pid,
    state: field(3) ?? "",
    ppid: Number(field(4)),
    userMs: ticksToMs(field(14)),
    systemMs: ticksToMs(field(15)),
    reapedChildrenUserMs: ticksToMs(field(16)),
    reapedChildrenSystemMs: ticksToMs(field(17)),
  };
  const numbers = [
    stat.pid,
    stat.ppid,
    stat.userMs,
    stat.systemMs,
    stat.reapedChildrenUserMs,
    stat.reapedChildrenSystemMs,
  ];
  return numbers.every(Number.isFinite) ? stat : null;
}

/**
 * The stat of one process, or null when it is gone (it may exit between being listed and being
 * read: ENOENT and ESRCH are expected here, not errors).
 */
export function readProcStat(pid: number): ProcStat | null {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return null;
  }
}

let procAvailable: boolean | undefined;

/**
 * Whether this system reports per-process CPU times in /proc (Linux). Elsewhere (macOS, Windows)
 * children can only be held to a wall-clock ceiling.
 */
export function procCpuAvailable(): boolean {
  procAvailable ??= existsSync(`/proc/${process.pid}/stat`);
  return procAvailable;
}
