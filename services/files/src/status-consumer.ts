import { CONSUMER_GROUPS, secondsBetween, type FileStages, type FileType } from "@locus/contracts";
import type { Bus } from "@locus/bus";
import type { FileRecord, FileStore } from "@locus/metadata-store";
import type { Logger } from "@locus/runtime";
import { Attr, inSpan } from "@locus/telemetry";
import { publishFileEvent } from "./file-events.ts";

/** What the files service tells whoever counts (metrics). */
export interface FilesObserver {
  /** An upload's request completed and its processing was asked for. */
  uploadAccepted(kind: FileType): void;
  /**
   * A file became ready (`outcome` "ready") or failed (its failure's code), `seconds` after its
   * upload was recorded.
   */
  fileFinished(kind: FileType, outcome: string, seconds: number): void;
  /** The seconds each stage of a file that became ready took (see FileStages). */
  stagesTook(kind: FileType, stages: FileStages): void;
}

/** Seconds since a record's creation, for the "file ready" and "file failed" lines and metrics. */
const secondsSince = (createdAt: string) => secondsBetween(Date.parse(createdAt), Date.now());

/**
 * Moves a file's status as the pipeline reports: processing (with progress), ready, failed.
 * Idempotent and order-tolerant: a late progress message never takes a finished file back, and a
 * report about a deleted file cleans up what the pipeline made for it.
 */
export async function subscribeStatusUpdates(
  bus: Bus,
  store: FileStore,
  logger: Logger,
  observer?: FilesObserver,
): Promise<void> {
  await bus.subscribe(
    {
      group: "files-status",
      topics: CONSUMER_GROUPS["files-status"],
      concurrency: 4,
      maxAttempts: 5,
    },
    async (delivery) => {
      const { message } = delivery;
      const record = await store.getFileById(message.fileId);
      if (!record || record.userId !== message.userId) {
        // Deleted while it was processed: make sure no passage outlives it.
        if (delivery.topic === "file.indexed")
          await bus.publish("file.deleted", { fileId: message.fileId, userId: message.userId });
        return;
      }
      switch (delivery.topic) {
        case "file.progress": {
          if (record.status !== "pending" && record.status !== "processing") return;
          await store.updateFile(record.id, { status: "processing", progress: delivery.message.progress });
          return;
        }
        case "file.indexed": {
          const { passageCount, pageCount, durationS, stages } = delivery.message;
          const updated = await changeStatus(record, "ready", undefined, () =>
            store.updateFile(record.id, {
              status: "ready",
              progress: 1,
              error: null,
              passageCount,
              pageCount,
              durationS: durationS ?? null,
            }),
          );
          await announce(bus, "file.ready", record, updated, delivery);
          const totalS = secondsSince(record.createdAt);
          logger.info({ fileId: record.id, passageCount, pageCount, totalS, stages }, "file ready");
          // A redelivered report changes nothing, and is not counted again.
          if (record.status !== "ready") {
            observer?.fileFinished(record.fileType, "ready", totalS);
            if (stages) observer?.stagesTook(record.fileType, stages);
          }
          return;
        }
        case "file.failed": {
          const { error, stages } = delivery.message;
          const updated = await changeStatus(record, "failed", error.code, () =>
            store.updateFile(record.id, { status: "failed", progress: null, error }),
          );
          await announce(bus, "file.failed", record, updated, delivery);
          const totalS = secondsSince(record.createdAt);
          // The stages its failure's report knows (an extractor's refusal: waited and extraction).
          logger.warn({ fileId: record.id, code: error.code, totalS, stages }, "file failed");
          if (record.status !== "failed") observer?.fileFinished(record.fileType, error.code, totalS);
          return;
        }
      }
    },
  );
}

/**
 * Publishes the file's event once its change is recorded: when this report moved it, and again
 * when the report comes a second time, retried after a failure or redelivered after its worker
 * stopped (either may have recorded the change and not published). Both carry the same id (from
 * the report's publication time), so webhooks deliver it once; a second report of the same
 * outcome (first delivery, file already there) is not announced again.
 */
async function announce(
  bus: Bus,
  type: "file.ready" | "file.failed",
  before: FileRecord,
  after: FileRecord | null,
  delivery: { attempt: number; redelivered?: boolean; publishedAt?: number },
): Promise<void> {
  const status = type === "file.ready" ? "ready" : "failed";
  const again = delivery.attempt > 1 || delivery.redelivered === true;
  if (!after || (before.status === status && !again)) return;
  await publishFileEvent(bus, type, after, String(delivery.publishedAt ?? ""));
}

/** A file's move to ready or failed, as a span `file ready` / `file failed` in its upload's trace. */
function changeStatus<T>(
  record: FileRecord,
  status: "ready" | "failed",
  code: string | undefined,
  change: () => Promise<T>,
): Promise<T> {
  const attributes = {
    [Attr.fileId]: record.id,
    [Attr.fileKind]: record.fileType,
    [Attr.fileStatus]: status,
    ...(code === undefined ? {} : { [Attr.errorType]: code }),
  };
  return inSpan(`file ${status}`, { attributes }, change);
}
