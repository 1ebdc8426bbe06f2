import { defer } from "./cleanup.ts";
import { removeDataDir, startLocus, tempDataDir, type LocusProcess } from "./deps.ts";

const STOP_TIMEOUT_MS = 15_000;

/** Runs `fn` with a fresh temporary directory that is removed afterwards, whatever happens. */
export async function withTempDir<T>(prefix: string, fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = tempDataDir(prefix);
  const remove = defer(() => removeDataDir(dir));
  try {
    return await fn(dir);
  } finally {
    await remove();
  }
}

/** Stops the server with SIGTERM, and SIGKILLs it if it has not exited in time. */
async function stopServer(server: LocusProcess): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), STOP_TIMEOUT_MS);
  });
  try {
    const outcome = await Promise.race([server.stop(), timedOut]);
    if (outcome === "timeout") {
      console.error(`server did not stop within ${STOP_TIMEOUT_MS} ms; killing it`);
      await server.kill();
    }
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Starts the real server (as `pnpm start` does, on 127.0.0.1 and a free port) on `dataDir`, runs
 * `fn`, and stops the server afterwards, whatever happens.
 */
export async function withServer<T>(
  dataDir: string,
  env: Record<string, string>,
  fn: (server: LocusProcess) => Promise<T>,
): Promise<T> {
  const server = await startLocus({ dataDir, env: { HOST: "127.0.0.1", ...env }, timeoutMs: 60_000 });
  const stop = defer(() => stopServer(server));
  try {
    return await fn(server);
  } finally {
    await stop();
  }
}

/** Milliseconds since `start` (a performance.now() reading). */
export const since = (start: number): number => performance.now() - start;

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Request durations the server logged itself (gateway "request" lines), by request id. */
export function serverTimings(logs: readonly string[]): Map<string, number> {
  const timings = new Map<string, number>();
  for (const line of logs) {
    if (!line.includes('"msg":"request"')) continue;
    try {
      const entry = JSON.parse(line) as { requestId?: unknown; ms?: unknown };
      if (typeof entry.requestId === "string" && typeof entry.ms === "number")
        timings.set(entry.requestId, entry.ms);
    } catch {
      // not a JSON log line
    }
  }
  return timings;
}
