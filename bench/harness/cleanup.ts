/**
 * Cleanup that runs whatever happens: each benchmark registers what it started (a server, a temp
 * directory) and removes it itself in a finally block; whatever is still registered when the
 * process is interrupted (Ctrl-C, SIGTERM, the global time limit) is removed here, and a cleanup
 * that a benchmark has already begun is waited for, so the process never exits halfway through one.
 */
type Cleanup = () => Promise<unknown> | void;

/** Registered and not yet begun: the function that runs each one (once). */
const pending = new Set<() => Promise<void>>();
/** Begun and not yet ended. */
const running = new Set<Promise<void>>();
let closing: string | null = null;

/** Registers a cleanup and returns a function that runs it once and unregisters it. */
export function defer(cleanup: Cleanup): () => Promise<void> {
  let run: Promise<void> | null = null;
  const runOnce = (): Promise<void> => {
    if (run === null) {
      pending.delete(runOnce);
      const started = (async () => {
        await cleanup();
      })();
      run = started;
      running.add(started);
      const forget = () => void running.delete(started);
      started.then(forget, forget);
    }
    return run;
  };
  pending.add(runOnce);
  return runOnce;
}

/** Runs every registered cleanup, newest first, and waits for those already begun; never throws. */
export async function cleanupAll(): Promise<void> {
  for (const runOnce of [...pending].reverse()) {
    try {
      await runOnce();
    } catch (err) {
      console.error("cleanup failed:", err);
    }
  }
  // Begun by a benchmark (its finally block), perhaps still going: wait for them too.
  for (const result of await Promise.allSettled([...running]))
    if (result.status === "rejected") console.error("cleanup failed:", result.reason);
}

/**
 * Throws once the run is being stopped (Ctrl-C, the time limit): the benchmark that is running
 * then fails at its next step instead of starting servers that nothing would stop.
 */
export function assertRunning(): void {
  if (closing !== null) throw new Error(`not started: the run is stopping (${closing})`);
}

const tracked = new Set<Promise<unknown>>();
const TRACKED_WAIT_MS = 15_000;

/**
 * Marks a short step that writes into what a cleanup removes (the CLI creating a user, a dataset
 * being written): shutDown lets it finish before it removes anything, or it would write again into
 * a schema or directory that was just removed.
 */
export function track<T>(step: Promise<T>): Promise<T> {
  const settled = step.then(
    () => undefined,
    () => undefined,
  );
  tracked.add(settled);
  void settled.then(() => tracked.delete(settled));
  return step;
}

/** Refuses anything new (see assertRunning), lets tracked steps end, then runs every cleanup. */
export async function shutDown(reason: string): Promise<void> {
  closing = reason;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all(tracked),
    new Promise((resolve) => {
      timer = setTimeout(resolve, TRACKED_WAIT_MS);
    }),
  ]);
  clearTimeout(timer);
  await cleanupAll();
}
