import type { Bus } from "./bus.ts";

/** How often long work says it is alive, unless told otherwise: well inside the default 600 s stall. */
export const DEFAULT_HEARTBEAT_MS = 60_000;

/**
 * Keeps a file's record fresh while long work on it runs (an OCR page, a transcription, embedding
 * a large file): publishes `file.progress` with the work's current share every `everyMs`, so the
 * files service's stall sweep never mistakes work in hand for lost work and starts it a second
 * time. Returns the function that stops it. A failed publish is only skipped: the next one counts.
 */
export function startHeartbeat(
  bus: Bus,
  file: { fileId: string; userId: string },
  progress: () => number,
  everyMs: number = DEFAULT_HEARTBEAT_MS,
): () => void {
  const timer = setInterval(() => {
    bus.publish("file.progress", { ...file, progress: progress() }).catch(() => undefined);
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
