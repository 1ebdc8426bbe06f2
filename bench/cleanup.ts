/**
 * Cleanup that runs whatever happens: each benchmark registers what it started (a server, a temp
 * directory) and removes it itself in a finally block; whatever is still registered when the
 * process is interrupted (Ctrl-C, SIGTERM, the global time limit) is removed here.
 */
type Cleanup = () => Promise<unknown> | void;

const pending = new Set<Cleanup>();

/** Registers a cleanup and returns a function that runs it once and unregisters it. */
export function defer(cleanup: Cleanup): () => Promise<void> {
  let done = false;
  pending.add(cleanup);
  return async () => {
    if (done) return;
    done = true;
    pending.delete(cleanup);
    await cleanup();
  };
}

/** Runs every registered cleanup, newest first; errors are reported, never thrown. */
export async function cleanupAll(): Promise<void> {
  for (const cleanup of [...pending].reverse()) {
    pending.delete(cleanup);
    try {
      await cleanup();
    } catch (err) {
      console.error("cleanup failed:", err);
    }
  }
}
