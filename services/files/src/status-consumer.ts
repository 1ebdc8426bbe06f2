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
  /**
   * A pipeline report changed nothing: the same outcome again (`duplicate`: a redelivery, or a
   * stalled file's second run), or one the file has moved past (`stale`: progress after the file
   * finished or behind what was reported, a success after a failure or the reverse).
   */
  reportIgnored(topic: StatusTopic, reason: "duplicate" | "stale"): void;
  /** The processing request of an accepted upload could not be handed to the bus (it is retried). */
  publishFailed(topic: string): void;
}

/** The reports that move a file's status. */
export type StatusTopic = (typeof CONSUMER_GROUPS)["files-status"][number];

/** Seconds since a record's creation, for the "file ready" and "file failed" lines and metrics. */
const secondsSince = (createdAt: string) => secondsBetween(Date.parse(createdAt), Date.now());

/** Where a file's processing may still move from: its work is waiting or under way. */
const UNFINISHED = ["pending", "processing"] as const;

/**
 * Moves a file's status as the pipeline reports: processing (with progress), ready, failed.
 * States only move forward: each write is a compare-and-set on the statuses it may move from
 * (never on a record read before), so reports handled late, out of order or twice (the group
 * handles several at once, and the broker redelivers after a crash) cannot take a file back: a
 * progress report never lowers progress nor reopens a finished file, and a finished file is left
 * only by an operator's retry, a re-extraction or a delete. What changed nothing is counted.
 * A report about a deleted file cleans up what the pipeline made for it.
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
          const { progress } = delivery.message;
          const moved =
            (await store.updateFile(
              record.id,
              { status: "processing", progress },
              { status: UNFINISHED, progressUpTo: progress },
            )) ??
            // Behind the progress recorded (a retried attempt starts again from 0): the file keeps
            // its progress, and the report still says its work is alive, so the stall sweep
            // leaves it alone.
            (await store.updateFile(record.id, { status: "processing" }, { status: UNFINISHED }));
          if (!moved) observer?.reportIgnored(delivery.topic, "stale");
          return;
        }
        case "file.indexed": {
          const { passageCount, pageCount, durationS, stages, vectorsLater } = delivery.message;
          const moved = await changeStatus(record, "ready", undefined, () =>
            store.updateFile(
              record.id,
              {
                status: "ready",
                progress: 1,
                error: null,
                passageCount,
                pageCount,
                durationS: durationS ?? null,
                // Indexed for keyword search alone: the meaning stage's file.encoded follows.
                aiVectors: vectorsLater === true ? "pending" : null,
              },
              { status: UNFINISHED },
            ),
          );
          if (!moved) {
            await ignore(store, bus, observer, delivery, record.id, "ready");
            return;
          }
          await publishFileEvent(bus, "file.ready", moved, causeOf(delivery));
          const totalS = secondsSince(record.createdAt);
          logger.info({ fileId: record.id, passageCount, pageCount, totalS, stages }, "file ready");
          observer?.fileFinished(record.fileType, "ready", totalS);
          if (stages) observer?.stagesTook(record.fileType, stages);
          return;
        }
        case "file.encoded": {
          const moved = await store.updateFile(
            record.id,
            { aiVectors: "ready" },
            { status: ["ready"], aiVectors: "pending" },
          );
          if (moved) {
            logger.info(
              { fileId: record.id, encoded: delivery.message.encoded },
              "file encoded for ai search",
            );
            return;
          }
          // Not ready yet: the report that makes it ready is behind this one (handled late, or
          // retried), and would set it pending after this: try again once it is through.
          if ((UNFINISHED as readonly string[]).includes(record.status)) {
            throw new Error("file.encoded before the file was ready: tried again later");
          }
          // Encoded already (a redelivery), or failed, or indexed again since with its vectors.
          observer?.reportIgnored(delivery.topic, record.aiVectors === "ready" ? "duplicate" : "stale");
          return;
        }
        case "file.failed": {
          const { error, stages } = delivery.message;
          const moved = await changeStatus(record, "failed", error.code, () =>
            store.updateFile(record.id, { status: "failed", progress: null, error }, { status: UNFINISHED }),
          );
          if (!moved) {
            await ignore(store, bus, observer, delivery, record.id, "failed");
            return;
          }
          await publishFileEvent(bus, "file.failed", moved, causeOf(delivery));
          const totalS = secondsSince(record.createdAt);
          // The stages its failure's report knows (an extractor's refusal: waited and extraction).
          logger.warn({ fileId: record.id, code: error.code, totalS, stages }, "file failed");
          observer?.fileFinished(record.fileType, error.code, totalS);
          return;
        }
      }
    },
  );
}

/** The event id's cause: the report's publication time, the same on every delivery of it. */
const causeOf = (delivery: { publishedAt?: number }) => String(delivery.publishedAt ?? "");

/**
 * A report of an outcome the file could not move to. The same outcome again is a duplicate: when
 * this very report comes a second time (retried after a failure, or redelivered after its worker
 * stopped, either of which may have recorded the change and not published it), its event is
 * published again, under the same id, so webhooks deliver it once. Any other outcome is stale.
 */
async function ignore(
  store: FileStore,
  bus: Bus,
  observer: FilesObserver | undefined,
  delivery: { topic: StatusTopic; attempt: number; redelivered?: boolean; publishedAt?: number },
  fileId: string,
  outcome: "ready" | "failed",
): Promise<void> {
  const now = await store.getFileById(fileId);
  if (!now) return; // deleted meanwhile: its delete announced it
  if (now.status !== outcome) {
    observer?.reportIgnored(delivery.topic, "stale");
    return;
  }
  observer?.reportIgnored(delivery.topic, "duplicate");
  if (delivery.attempt > 1 || delivery.redelivered === true)
    await publishFileEvent(bus, outcome === "ready" ? "file.ready" : "file.failed", now, causeOf(delivery));
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
