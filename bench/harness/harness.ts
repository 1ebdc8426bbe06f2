import { assertRunning, defer } from "./cleanup.ts";
import {
  DEFAULT_EMBEDDER,
  LocalEmbedder,
  removeDataDir,
  SentenceEncoder,
  startLocus,
  startSplitStack,
  tempDataDir,
  type Embedder,
  type LocusProcess,
  type SplitStack,
} from "./deps.ts";

const STOP_TIMEOUT_MS = 15_000;

/** Runs `fn` with a fresh temporary directory that is removed afterwards, whatever happens. */
export async function withTempDir<T>(prefix: string, fn: (dir: string) => Promise<T>): Promise<T> {
  assertRunning();
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
 * The ai engine settings a benchmark run was started with (`LOCUS_EMBEDDER=local pnpm bench`),
 * passed on to every server it starts, so that one session can measure each engine in turn.
 */
export const AI_ENGINE_ENV: Record<string, string> = Object.fromEntries(
  ["LOCUS_EMBEDDER", "LOCUS_MODELS_DIR"].flatMap((name) => {
    const value = process.env[name];
    return value ? [[name, value]] : [];
  }),
);

/**
 * The engine that writes a benchmark's passage vectors directly into an index, the same one the
 * servers it starts embed questions with (AI_ENGINE_ENV, else Locus's default): the sentence
 * encoder, or the word vectors with LOCUS_EMBEDDER=local.
 */
export async function benchEmbedder(): Promise<Embedder> {
  if ((AI_ENGINE_ENV.LOCUS_EMBEDDER ?? DEFAULT_EMBEDDER) === "encoder")
    return SentenceEncoder.load(
      AI_ENGINE_ENV.LOCUS_MODELS_DIR ? { modelsDir: AI_ENGINE_ENV.LOCUS_MODELS_DIR } : {},
    );
  return LocalEmbedder.load();
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
  assertRunning();
  const server = await startLocus({
    dataDir,
    env: { HOST: "127.0.0.1", ...AI_ENGINE_ENV, ...env },
    timeoutMs: 60_000,
  });
  const stop = defer(() => stopServer(server));
  try {
    return await fn(server);
  } finally {
    await stop();
  }
}

/** The split stack's services as its launcher named them (gateway, files, extractor-pdf-2, ...). */
export function splitServices(stack: SplitStack): string[] {
  const names = new Set<string>();
  for (const line of stack.logs) {
    const m = /^locus-split: (\S+) started with pid \d+$/.exec(line);
    if (m?.[1]) names.add(m[1]);
  }
  return [...names];
}

/**
 * Stops a split stack (its launcher stops every service; the stack then drops its Postgres schema,
 * queues and S3 server). When the launcher does not exit in time, each service and the launcher
 * are killed: killing the launcher alone would leave its services running.
 */
async function stopSplit(stack: SplitStack): Promise<void> {
  const stopping = stack.stop();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = (ms: number) =>
    new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), ms);
    });
  try {
    if ((await Promise.race([stopping, timedOut(STOP_TIMEOUT_MS * 2)])) !== "timeout") return;
    console.error(`the split stack did not stop within ${STOP_TIMEOUT_MS * 2} ms; killing its processes`);
    for (const service of splitServices(stack)) {
      try {
        process.kill(stack.pidOf(service), "SIGKILL");
      } catch {
        // already gone
      }
    }
    stack.child.kill("SIGKILL");
    clearTimeout(timer);
    // stop() goes on with the clean-up (schema, queues, S3 server) once the launcher has exited.
    if ((await Promise.race([stopping, timedOut(STOP_TIMEOUT_MS)])) === "timeout")
      throw new Error("the split stack's clean-up did not finish after its processes were killed");
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Starts the split shape (one process per target, on the machine's Postgres, RabbitMQ and Redis
 * and an in-test S3 server, isolated per run), runs `fn`, and stops and removes it afterwards,
 * whatever happens, including an interruption while it is still starting.
 */
export async function withSplitStack<T>(
  options: { extractors: number; env: Record<string, string> },
  fn: (stack: SplitStack) => Promise<T>,
): Promise<T> {
  assertRunning();
  const starting = startSplitStack({
    extractors: options.extractors,
    env: { HOST: "127.0.0.1", ...AI_ENGINE_ENV, ...options.env },
  });
  const stop = defer(async () => {
    let stack: SplitStack;
    try {
      stack = await starting;
    } catch {
      return; // it cleaned up after itself
    }
    await stopSplit(stack);
  });
  let stack: SplitStack;
  try {
    stack = await starting;
    assertRunning(); // interrupted while it started: stop it now, before anything writes into it
  } catch (err) {
    await stop();
    throw err;
  }
  try {
    return await fn(stack);
  } finally {
    await stop();
  }
}

/** Milliseconds since `start` (a performance.now() reading). */
export const since = (start: number): number => performance.now() - start;

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Request durations the server logged itself ("request" lines), by request id; only those of
 * `service` when given (the split shape logs every service into one stream).
 */
export function serverTimings(logs: readonly string[], service?: string): Map<string, number> {
  const timings = new Map<string, number>();
  for (const line of logs) {
    if (!line.includes('"msg":"request"')) continue;
    if (service !== undefined && !line.includes(`"service":"${service}"`)) continue;
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
