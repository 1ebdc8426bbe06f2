import { CONSUMER_GROUPS } from "@locus/contracts";
import type { Bus } from "@locus/bus";
import type { FileStore } from "@locus/metadata-store";
import type { Logger } from "@locus/runtime";

/**
 * Moves a file's status as the pipeline reports: processing (with progress), ready, failed.
 * Idempotent and order-tolerant: a late progress message never takes a finished file back, and a
 * report about a deleted file cleans up what the pipeline made for it.
 */
export async function subscribeStatusUpdates(bus: Bus, store: FileStore, logger: Logger): Promise<void> {
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
          const { passageCount, pageCount, durationS } = delivery.message;
          await store.updateFile(record.id, {
            status: "ready",
            progress: 1,
            error: null,
            passageCount,
            pageCount,
            durationS: durationS ?? null,
          });
          logger.info({ fileId: record.id, passageCount, pageCount }, "file ready");
          return;
        }
        case "file.failed": {
          const { error } = delivery.message;
          await store.updateFile(record.id, { status: "failed", progress: null, error });
          logger.warn({ fileId: record.id, code: error.code }, "file failed");
          return;
        }
      }
    },
  );
}
