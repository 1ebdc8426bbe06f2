import { procCpuAvailable } from "./proc-stat.ts";
import { processTree } from "./process-cpu.ts";

/** Sends a signal, ignoring a process that has already gone (ESRCH). */
function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Exited in the meantime: nothing left to stop.
  }
}

/** Rounds of looking for new descendants; each stopped generation can add at most one more. */
const MAX_FREEZE_ROUNDS = 32;

/**
 * Kills a process and every descendant it has (SIGKILL), children before parents.
 *
 * The tree is first frozen (SIGSTOP), from the root down, until a look finds no process not yet
 * stopped: a stopped process cannot fork, so no child is born after the look that would have found
 * it, and none is orphaned out of reach when its parent dies first. Without /proc (not Linux) only
 * the root is killed.
 *
 * The caller must know `rootPid` is still its own unreaped child (for a ChildProcess: its
 * exitCode and signalCode are both null), or the id may already belong to another process.
 */
export function killProcessTree(rootPid: number): void {
  if (!procCpuAvailable()) {
    signal(rootPid, "SIGKILL");
    return;
  }
  const stopped = new Set<number>();
  let tree: number[] = [rootPid];
  for (let round = 0; round < MAX_FREEZE_ROUNDS; round += 1) {
    const fresh = tree.filter((pid) => !stopped.has(pid));
    if (fresh.length === 0) break;
    for (const pid of fresh) {
      signal(pid, "SIGSTOP");
      stopped.add(pid);
    }
    tree = processTree(rootPid);
  }
  // Deepest first, the root last; a process found in any round is killed even if it has since
  // moved out of the tree's listing.
  const victims = [...new Set([...tree, ...stopped])].filter((pid) => pid !== rootPid).reverse();
  for (const pid of victims) signal(pid, "SIGKILL");
  signal(rootPid, "SIGKILL");
}
