import { existsSync, readdirSync, readFileSync } from "node:fs";
import { procCpuAvailable, readProcStat, type ProcStat } from "./proc-stat.ts";

/** The CPU time a process tree has used so far. */
export interface ProcessTreeCpu {
  /** User plus system time of the tree, in milliseconds. */
  cpuMs: number;
  /** The processes found in the tree: the root first, every parent before its children. */
  pids: number[];
}

/** Reads a directory or file of /proc that may vanish as its process exits. */
function readOrNothing<T>(read: () => T, nothing: T): T {
  try {
    return read();
  } catch {
    return nothing;
  }
}

const numericEntries = (dir: string) =>
  readOrNothing(() => readdirSync(dir), [] as string[])
    .filter((name) => /^\d+$/.test(name))
    .map(Number);

/**
 * The children of a process from /proc/<pid>/task/<tid>/children, one file per thread: a child
 * is listed under the thread that created it, and programs such as node fork from several.
 */
export function childrenFromTaskFiles(pid: number): number[] {
  return numericEntries(`/proc/${pid}/task`).flatMap((tid) =>
    readOrNothing(() => readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8"), "")
      .split(/\s+/)
      .filter((word) => word !== "")
      .map(Number),
  );
}

/** Every process's children, from the parent id in each /proc/<pid>/stat: the slow way. */
export function childrenByScanningProc(): Map<number, number[]> {
  const children = new Map<number, number[]>();
  for (const pid of numericEntries("/proc")) {
    const stat = readProcStat(pid);
    if (!stat) continue;
    const siblings = children.get(stat.ppid) ?? [];
    siblings.push(pid);
    children.set(stat.ppid, siblings);
  }
  return children;
}

let taskChildrenFiles: boolean | undefined;

/**
 * Whether the kernel offers /proc/<pid>/task/<tid>/children (built with CONFIG_PROC_CHILDREN, as
 * Debian's, Ubuntu's and most distributions' kernels are). Without it the descendants of a process
 * are found by reading the stat of every process on the machine, on each poll.
 */
export function taskChildrenFilesAvailable(): boolean {
  taskChildrenFiles ??= existsSync(`/proc/${process.pid}/task/${process.pid}/children`);
  return taskChildrenFiles;
}

/**
 * A process and its live descendants, parents before children (breadth first). A descendant whose
 * parent has exited was handed to init (or a subreaper) and is no longer found: the tree as the
 * kernel knows it now.
 */
export function processTree(rootPid: number): number[] {
  const childrenOf = taskChildrenFilesAvailable()
    ? childrenFromTaskFiles
    : (() => {
        const map = childrenByScanningProc();
        return (pid: number) => map.get(pid) ?? [];
      })();
  const tree = [rootPid];
  const seen = new Set(tree);
  // The list grows as it is walked: each process's children are appended after it.
  for (let at = 0; at < tree.length; at += 1) {
    for (const child of childrenOf(tree[at]!)) {
      if (seen.has(child)) continue;
      seen.add(child);
      tree.push(child);
    }
  }
  return tree;
}

/**
 * What one live process accounts for: its own time, and that of the children it has reaped. A
 * reaped child's time (with its own reaped children's) is added to its parent's when the parent
 * waits for it, so summing this over the live tree counts every process that ever ran in it once:
 * the live ones by their own time, the exited ones inside the live ancestor that reaped them.
 */
const accountedMs = (stat: ProcStat) =>
  stat.userMs + stat.systemMs + stat.reapedChildrenUserMs + stat.reapedChildrenSystemMs;

/**
 * The CPU time (user + system) used so far by a process and all its descendants, live and exited.
 *
 * Returns null when it cannot be read: the system has no /proc (not Linux: then only a wall-clock
 * ceiling can hold a child), or the process is gone. A process that has exited but not yet been
 * reaped (a zombie) still reads. Time of descendants that were orphaned (their parent exited
 * before them) is not counted, and time is only as fresh as the kernel's tick accounting (10 ms).
 */
export function readProcessTreeCpu(rootPid: number): ProcessTreeCpu | null {
  if (!procCpuAvailable()) return null;
  const root = readProcStat(rootPid);
  if (!root) return null;
  let cpuMs = accountedMs(root);
  const pids = [rootPid];
  // Parents are read before their children, so a child reaped in between is missed by this one
  // reading rather than counted twice (in its own time and in its parent's reaped total).
  for (const pid of processTree(rootPid).slice(1)) {
    // A descendant that exited between the listing and now: its time moved to its parent's
    // reaped total, or will at the next reading.
    const stat = readProcStat(pid);
    if (!stat) continue;
    cpuMs += accountedMs(stat);
    pids.push(pid);
  }
  return { cpuMs, pids };
}
