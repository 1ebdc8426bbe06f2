import type { FileFailureCode, FileStages } from "@locus/contracts";
import type { Logger } from "@locus/runtime";
import type { Bus } from "./bus.ts";

/** How a file's work says it gave up: the reason its record shows, and the operators' log line. */
export interface GiveUp {
  /** What the failed file record's `error` says. */
  code: FileFailureCode;
  message: string;
  /** The log line, and what it names besides the error and the file id. */
  log: string;
  logFields?: Record<string, unknown>;
  /** The stages the file went through, as far as the giver-up knows them (for the "file failed" line). */
  stages?: FileStages;
}

/**
 * The one place a handler of file work gives up, called with the error its attempt failed with.
 * Before the last attempt it only rethrows: the bus retries. On the last attempt (`final`) it logs
 * the error, fails the file with `giveUp`'s reason (`file.failed`), and rethrows all the same, so
 * the message still goes to dead letters, where operators can see it.
 */
export async function giveUpOnFile(
  deps: { bus: Bus; logger: Logger },
  delivery: { final: boolean },
  file: { fileId: string; userId: string },
  err: unknown,
  giveUp: GiveUp,
): Promise<never> {
  if (delivery.final) {
    deps.logger.error({ err, fileId: file.fileId, ...giveUp.logFields }, giveUp.log);
    await deps.bus.publish("file.failed", {
      fileId: file.fileId,
      userId: file.userId,
      error: { code: giveUp.code, message: giveUp.message },
      ...(giveUp.stages ? { stages: giveUp.stages } : {}),
    });
  }
  throw err;
}

/**
 * SubscribeOptions.abandon for file work: the message came back unanswered too often (each worker
 * that took it crashed or was killed, likely by the file itself), so the file fails with
 * `processing_abandoned` instead of stopping worker after worker; the bus dead-letters the message.
 */
export async function abandonFile(
  deps: { bus: Bus; logger: Logger },
  file: { fileId: string; userId: string },
  what: string,
  reason: string,
): Promise<void> {
  deps.logger.error(
    { fileId: file.fileId, reason },
    `${what} abandoned: its workers kept stopping before an answer`,
  );
  await deps.bus.publish("file.failed", {
    fileId: file.fileId,
    userId: file.userId,
    error: {
      code: "processing_abandoned",
      message:
        `Locus gave up on this file: the ${what} stopped before finishing each time it was tried ` +
        "(the file may need more memory or time than Locus allows).",
    },
  });
}
