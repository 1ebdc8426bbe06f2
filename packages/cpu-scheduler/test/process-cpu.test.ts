import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { CLOCK_TICKS_PER_SECOND, killProcessTree, readProcessTreeCpu } from "../src/index.ts";
import { parseProcStat, procCpuAvailable, readProcStat } from "../src/proc-stat.ts";
import {
  childrenByScanningProc,
  childrenFromTaskFiles,
  processTree,
  taskChildrenFilesAvailable,
} from "../src/process-cpu.ts";

/** Waits, a little at a time, until `found` returns something (at most ten seconds). */
async function eventually<T>(found: () => T | undefined): Promise<T> {
  for (let tries = 0; tries < 200; tries += 1) {
    const value = found();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("gave up waiting");
}

/** A process that is gone, or dead and only waiting to be reaped, has not survived. */
const survives = (pid: number) => {
  const stat = readProcStat(pid);
  return stat !== null && stat.state !== "Z" && stat.state !== "X";
};

describe("parseProcStat", () => {
  it("counts fields from after the last ')', whatever the command name holds", () => {
    const line =
      "4242 (a) (b c) d) S 17 4242 4242 0 -1 4194304 100 0 0 0 250 31 7 3 20 0 1 0 59895 3133440 407";
    expect(parseProcStat(line)).toEqual({
      pid: 4242,
      state: "S",
      ppid: 17,
      userMs: 2500,
      systemMs: 310,
      reapedChildrenUserMs: 70,
      reapedChildrenSystemMs: 30,
    });
  });

  it("refuses what is not a stat line", () => {
    expect(parseProcStat("")).toBeNull();
    expect(parseProcStat("12 (x) S")).toBeNull();
  });

  it("uses Linux's user-space clock tick of 100 per second", () => {
    expect(CLOCK_TICKS_PER_SECOND).toBe(100);
  });
});

const onLinux = procCpuAvailable() ? describe : describe.skip;

onLinux("process trees from /proc", () => {
  const started: ChildProcess[] = [];
  afterEach(async () => {
    for (const child of started.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) {
        killProcessTree(child.pid!);
        await once(child, "exit");
      }
    }
  });
  const start = (script: string) => {
    const child = spawn("sh", ["-c", script], { stdio: "ignore" });
    started.push(child);
    return child;
  };

  it("reads this process's own CPU time", () => {
    const self = readProcessTreeCpu(process.pid);
    expect(self?.pids[0]).toBe(process.pid);
    expect(self?.cpuMs).toBeGreaterThan(0);
  });

  it("reads nothing for a process that does not exist", () => {
    expect(readProcessTreeCpu(2 ** 22 + 1)).toBeNull();
  });

  it("finds grandchildren, by the children files and by scanning every process alike", async () => {
    const root = start("sh -c 'sleep 30 & sleep 30 & wait' & wait");
    const tree = await eventually(() => {
      const pids = processTree(root.pid!);
      return pids.length === 4 ? pids : undefined;
    });
    expect(tree[0]).toBe(root.pid);
    const middle = tree[1]!;
    expect(readProcStat(middle)?.ppid).toBe(root.pid);
    for (const sleeper of tree.slice(2)) expect(readProcStat(sleeper)?.ppid).toBe(middle);

    const scanned = childrenByScanningProc();
    expect(scanned.get(root.pid!)).toEqual([middle]);
    expect([...(scanned.get(middle) ?? [])].sort()).toEqual(tree.slice(2).sort());
    if (taskChildrenFilesAvailable()) {
      expect(childrenFromTaskFiles(root.pid!)).toEqual([middle]);
      expect(childrenFromTaskFiles(middle).sort()).toEqual(tree.slice(2).sort());
    }
  });

  it("counts the time of a busy grandchild, and of children that have exited", async () => {
    // A child that burns processor time and exits (reaped by the shell), then a busy one that stays.
    const root = start(
      "sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done'; sh -c 'while :; do :; done' & wait",
    );
    const tree = await eventually(() => {
      const reading = readProcessTreeCpu(root.pid!);
      return reading && reading.pids.length === 2 && reading.cpuMs > 100 ? reading : undefined;
    });
    // The exited child's time is in the root's reaped total, the busy one's in its own.
    const rootStat = readProcStat(root.pid!)!;
    expect(rootStat.reapedChildrenUserMs + rootStat.reapedChildrenSystemMs).toBeGreaterThan(0);
    expect(tree.cpuMs).toBeGreaterThan(rootStat.userMs + rootStat.systemMs);
  });

  it("kills a whole tree, leaving no descendant alive", async () => {
    const root = start("sh -c 'sleep 30 & sh -c \"while :; do :; done\" & wait' & sleep 30 & wait");
    const tree = await eventually(() => {
      const pids = processTree(root.pid!);
      return pids.length === 5 ? pids : undefined;
    });
    killProcessTree(root.pid!);
    const [, signal] = (await once(root, "exit")) as [number | null, NodeJS.Signals | null];
    expect(signal).toBe("SIGKILL");
    const alive = await eventually(() => {
      const left = tree.filter(survives);
      return left.length === 0 ? left : undefined;
    });
    expect(alive).toEqual([]);
  });
});
