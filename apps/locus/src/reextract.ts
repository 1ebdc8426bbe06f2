import { uploadedTopic, type FileType } from "@locus/contracts";
import type { Bus } from "@locus/bus";
import { processingRequest } from "@locus/files";
import type { FileRecord, FileStore } from "@locus/metadata-store";

const PAGE = 500;

export interface ReextractFilter {
  kind?: FileType | undefined;
  userId?: string | undefined;
}

/** Asks the extractors of the file's kind to extract it from its stored original. */
export function publishForExtraction(bus: Bus, record: FileRecord): Promise<void> {
  return bus.publish(uploadedTopic(record.fileType), processingRequest(record));
}

/**
 * Queues ready files to be extracted again from their stored originals: what a newer extractor
 * does better (speech passages with word times, words hyphenated at line ends made whole, boxes
 * for text lines) reaches files uploaded before it. Each file goes back to `pending` (hidden from
 * search until it is ready again, when its passages are replaced at once) and, with a shared bus
 * (`bus`), is published for extraction now; without one, the all-in-one server takes it up when it
 * next starts, as it does every unfinished file.
 */
export async function queueReextraction(
  store: FileStore,
  bus: Bus | null,
  filter: ReextractFilter,
  progress: (line: string) => void,
): Promise<{ queued: number }> {
  const chosen: FileRecord[] = [];
  let afterId: string | undefined;
  for (;;) {
    const page = await store.listFilesWithStatus("ready", { limit: PAGE, ...(afterId ? { afterId } : {}) });
    chosen.push(
      ...page.filter(
        (f) =>
          (filter.kind === undefined || f.fileType === filter.kind) &&
          (filter.userId === undefined || f.userId === filter.userId),
      ),
    );
    if (page.length < PAGE) break;
    afterId = page.at(-1)?.id;
  }
  let queued = 0;
  for (const record of chosen) {
    const updated = await store.updateFile(
      record.id,
      { status: "pending", progress: null, requeues: 0 },
      { status: ["ready"] },
    );
    if (!updated) continue; // deleted, or already sent back, meanwhile
    if (bus) await publishForExtraction(bus, updated);
    queued += 1;
    if (queued % 100 === 0) progress(`${queued} of ${chosen.length} files queued`);
  }
  return { queued };
}
