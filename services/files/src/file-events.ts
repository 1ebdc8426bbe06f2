import { createHash } from "node:crypto";
import type { FileEvent, FileEventType } from "@locus/contracts";
import type { Bus } from "@locus/bus";
import type { FileRecord } from "@locus/metadata-store";
import { toFileDto } from "./file-dto.ts";

/**
 * An event id that the same cause always gets (a UUID, version 8, from a hash): a report
 * redelivered after its change was recorded publishes its event again under the same id, and the
 * webhooks consumer delivers it once per endpoint.
 */
export function fileEventId(fileId: string, type: FileEventType, cause: string): string {
  const hex = createHash("sha256").update(`${fileId}\n${type}\n${cause}`).digest("hex");
  const variant = ((parseInt(hex[16] ?? "0", 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** Tells webhooks that a file's change is recorded (`file.event`); `record` is the file as it now is. */
export function publishFileEvent(
  bus: Bus,
  type: FileEventType,
  record: FileRecord,
  cause: string,
): Promise<void> {
  const event: FileEvent = {
    id: fileEventId(record.id, type, cause),
    type,
    fileId: record.id,
    userId: record.userId,
    occurredAt: new Date().toISOString(),
    file: toFileDto(record),
  };
  return bus.publish("file.event", event);
}
