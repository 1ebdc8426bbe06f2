// The operator's commands about a running deployment's state, beside the account commands in
// cli.ts: `status`, `files retry`, `dead-letters list|replay` and `bus migrate-queues`.

import { QueueInUseError, type DeadLetterRecord } from "@locus/bus";
import { FileType, FileUploaded, uploadedTopic } from "@locus/contracts";
import type { FileRecord, MetadataStore } from "@locus/metadata-store";
import type { LocusConfig } from "@locus/runtime";
import { consumerGroupsOf, type Infrastructure } from "./infrastructure.ts";
import { publishForExtraction } from "./reextract.ts";

/** What the operator asked cannot be done: said in one sentence (exit code 2). */
export class OperatorError extends Error {}

/** The file named does not exist (exit code 3): a script can tell it from a mistyped command. */
export class NoSuchFileError extends OperatorError {}

const SHOWN = 10;
const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Rows as aligned columns. */
export function columns(rows: string[][]): string[] {
  const widths = (rows[0] ?? []).map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows.map((row) =>
    row
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd(),
  );
}

/**
 * Each dependency as this configuration reaches it, each consumer group's queue and dead letters
 * (on RabbitMQ), and the files that are stuck or failed. Resolves false when a dependency is down.
 */
export async function printStatus(
  infra: Infrastructure,
  store: MetadataStore,
  config: LocusConfig,
  out: (line: string) => void,
  /** Told which dependency is being reached, for the CLI's deadline. */
  reaching: (part: "bus" | "searchIndex") => void = () => undefined,
): Promise<boolean> {
  const { adapters } = config;
  out(
    `Locus: records in ${adapters.metadataStore}, files in ${adapters.blobStore}, messages on ${adapters.bus}, ` +
      `passages in ${adapters.searchIndex}`,
  );
  // Built here so that a dependency that cannot be reached is reported, not thrown.
  const unreachable: Record<string, string> = {};
  const build = async (name: string, make: () => Promise<unknown>) => {
    try {
      await make();
    } catch (err) {
      unreachable[name] = errorText(err);
    }
  };
  infra.blobs();
  // The in-process bus lives in the server's process: one built here would say nothing about it.
  if (adapters.bus === "rabbitmq") {
    reaching("bus");
    await build("bus", () => infra.messageBus());
  }
  reaching("searchIndex");
  await build("search_index", () => infra.searchIndex());
  const checks = await infra.readiness.report();
  out("");
  out("Dependencies:");
  const dependencyRows = [
    ["metadata_store", "ok"],
    ...Object.entries(checks).filter(([name]) => name !== "metadata_store"),
    ...Object.entries(unreachable).map(([name, reason]) => [name, `unavailable: ${reason}`]),
  ];
  for (const line of columns(dependencyRows)) out(`  ${line}`);
  const healthy =
    Object.keys(unreachable).length === 0 &&
    Object.values(checks).every((s) => s === "ok" || s === "degraded");

  out("");
  const broker = unreachable.bus ? undefined : await infra.broker();
  if (broker) {
    // Waiting and consumers as the broker says (a group with messages waiting and no consumer is
    // the first thing to look for). Not here: messages in flight (delivered, not yet acknowledged)
    // and the age of the oldest waiting one, which AMQP does not report without the management
    // plugin; peeking at a queue's head (basic.get, then requeue) would count a delivery against
    // a quorum queue's delivery limit. Each group's /metrics has its consumers' lag
    // (locus_bus_consumer_lag_seconds).
    const rows = [["GROUP", "WAITING", "CONSUMERS", "DEAD LETTERS", "QUEUE TYPE"]];
    let classic = false;
    for (const group of Object.keys(consumerGroupsOf(config))) {
      try {
        const { [group]: type = "unknown" } = await broker.queueTypes([group]);
        classic ||= type === "classic" && config.busQueueType === "quorum";
        const { waiting, consumers } = await broker.queueStats(group);
        rows.push([
          group,
          String(waiting),
          String(consumers),
          String(await broker.deadLetterCount(group)),
          type,
        ]);
      } catch (err) {
        rows.push([group, `unknown: ${errorText(err)}`, "", "", ""]);
      }
    }
    out("Queues:");
    for (const line of columns(rows)) out(`  ${line}`);
    const idle = rows.slice(1).filter(([, waiting, consumers]) => consumers === "0" && waiting !== "0");
    if (idle.length > 0) {
      out(
        `Messages wait with no consumer in: ${idle.map(([group]) => group).join(", ")} (start its processes).`,
      );
    }
    if (classic) {
      out("Classic queues redeliver a message that crashes every worker for ever: stop their consumers and");
      out("run pnpm locus bus migrate-queues (see the README's Operating section).");
    }
  } else if (unreachable.bus) {
    out("Queues: unknown while RabbitMQ cannot be reached (see bus above).");
  } else if (adapters.bus === "memory") {
    out("Queues: in the server's process (LOCUS_BUS=memory); its /metrics has locus_bus_queue_depth.");
  }

  const stalledBefore = new Date(Date.now() - config.stalledAfterMs).toISOString();
  const stalled = await store.listUnfinishedFiles({ limit: SHOWN + 1, updatedBefore: stalledBefore });
  const failed = await store.listFilesWithStatus("failed", { limit: SHOWN + 1 });
  const count = (files: FileRecord[]) => (files.length > SHOWN ? `more than ${SHOWN}` : String(files.length));
  out("");
  out(
    `Stalled files (pending or processing, no progress for ${Math.round(config.stalledAfterMs / 1000)} s): ` +
      count(stalled),
  );
  for (const line of columns(
    stalled.slice(0, SHOWN).map((f) => [f.id, f.fileType, f.status, `since ${f.updatedAt}`]),
  ))
    out(`  ${line}`);
  out(`Failed files: ${count(failed)}`);
  for (const line of columns(
    failed.slice(0, SHOWN).map((f) => [f.id, f.fileType, f.error?.code ?? "", f.error?.message ?? ""]),
  ))
    out(`  ${line}`);
  if (stalled.length + failed.length > 0) out("Retry one with: pnpm locus files retry FILE_ID");
  return healthy;
}

/**
 * Sends a failed or stalled file through extraction again, from its stored original. On a shared
 * bus it is published now; on the in-process one, the server takes it up when it next starts.
 */
export async function retryFile(
  infra: Infrastructure,
  store: MetadataStore,
  config: LocusConfig,
  fileId: string,
): Promise<string> {
  // A file id as the bus carries it (the one schema for it).
  if (!FileUploaded.shape.fileId.safeParse(fileId.toLowerCase()).success) {
    throw new OperatorError(`"${fileId}" is not a file id (a UUID, as pnpm locus status lists them)`);
  }
  const record = await store.getFileById(fileId.toLowerCase());
  if (!record) {
    throw new NoSuchFileError(
      `No file ${fileId} in ${config.adapters.metadataStore === "postgres" ? "the database" : config.dataDir}: ` +
        "pnpm locus status lists the stalled and failed ones",
    );
  }
  if (record.status === "ready") {
    throw new OperatorError(
      `File ${fileId} is ready; to extract ready files again, use pnpm locus files reextract`,
    );
  }
  const stalledBefore = Date.now() - config.stalledAfterMs;
  if (record.status !== "failed" && Date.parse(record.updatedAt) > stalledBefore) {
    throw new OperatorError(
      `File ${fileId} is ${record.status} and moved at ${record.updatedAt}: it is being worked on. ` +
        `Retry it once it has failed, or made no progress for ${Math.round(config.stalledAfterMs / 1000)} s`,
    );
  }
  // A fresh start: the count of interrupted runs that fails a file again (FilesService) restarts too.
  // Only as it was read: a file that finished or moved meanwhile is not sent back.
  const updated = await store.updateFile(
    record.id,
    { status: "pending", progress: null, error: null, requeues: 0 },
    { status: [record.status], updatedAt: record.updatedAt },
  );
  if (!updated) {
    throw new OperatorError(
      (await store.getFileById(record.id))
        ? `File ${fileId} moved meanwhile; look again with pnpm locus status`
        : `File ${fileId} was deleted meanwhile`,
    );
  }
  if (config.adapters.bus !== "rabbitmq") {
    return `Marked ${fileId} to be extracted again: start (or restart) the server with pnpm start and it extracts it.`;
  }
  await publishForExtraction(await infra.messageBus(), updated);
  return `Queued ${fileId} (${updated.fileType}) for extraction again; pnpm locus status follows it.`;
}

/** The topics of a file's work (extraction, indexing), whose dead letter failed the file. */
const FILE_WORK_TOPICS: ReadonlySet<string> = new Set([
  ...FileType.options.map((kind) => uploadedTopic(kind)),
  "file.extracted",
]);

/**
 * A dead letter of a file's work is handed back because its cause is fixed: the file it failed is
 * reopened (pending, its error gone) first, as a retry does, since no report moves a failed file.
 */
async function reopenFailedFile(store: MetadataStore, letter: DeadLetterRecord): Promise<void> {
  if (!FILE_WORK_TOPICS.has(letter.topic)) return;
  const fileId = (letter.payload as { fileId?: unknown } | null)?.fileId;
  if (typeof fileId !== "string") return;
  await store.updateFile(
    fileId,
    { status: "pending", progress: null, error: null, requeues: 0 },
    { status: ["failed"] },
  );
}

/** `dead-letters list|replay [--group G] [--limit N]`: RabbitMQ's dead-letter queues, by group. */
export async function deadLetters(
  infra: Infrastructure,
  store: MetadataStore,
  config: LocusConfig,
  verb: string | undefined,
  options: { group?: string | undefined; limit?: string | undefined },
  out: (line: string) => void,
): Promise<void> {
  if (verb !== "list" && verb !== "replay")
    throw new OperatorError("Say dead-letters list or dead-letters replay");
  if (config.adapters.bus !== "rabbitmq") {
    throw new OperatorError(
      "Dead letters are kept by RabbitMQ (LOCUS_BUS=rabbitmq); the in-process bus keeps them only in the " +
        'server\'s memory and logs each one ("message dead-lettered")',
    );
  }
  const inUse = Object.keys(consumerGroupsOf(config));
  if (options.group !== undefined && !inUse.includes(options.group)) {
    throw new OperatorError(`--group must be one of ${inUse.join(", ")}`);
  }
  const limit = options.limit === undefined ? 100 : Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) {
    throw new OperatorError("--limit must be a whole number from 1 to 10000");
  }
  const broker = await infra.broker();
  if (!broker) throw new OperatorError("No RabbitMQ bus is configured (AMQP_URL)");
  const groups = options.group ? [options.group] : inUse;
  let total = 0;
  for (const group of groups) {
    if (verb === "list") {
      const letters = await broker.deadLetters(group, limit);
      total += letters.length;
      if (letters.length === 0) continue;
      out(`${group}:`);
      const rows = letters.map((l) => {
        const fileId = (l.payload as { fileId?: unknown } | null)?.fileId;
        return [
          typeof fileId === "string" ? fileId : "-",
          l.topic,
          `attempt ${l.attempt}`,
          l.publishedAt ?? "-",
          l.reason,
        ];
      });
      for (const line of columns(rows)) out(`  ${line}`);
    } else {
      const replayed = await broker.replayDeadLetters(group, limit, (letter) =>
        reopenFailedFile(store, letter),
      );
      total += replayed.length;
      if (replayed.length > 0) out(`${group}: ${replayed.length} handed back to the queue`);
    }
  }
  out(
    verb === "list"
      ? total === 0
        ? "No dead letters."
        : `${total} dead letters (up to ${limit} per group). Replay them, once their cause is fixed, with: pnpm locus dead-letters replay`
      : `Replayed ${total} dead letters; each is handled again from its first attempt.`,
  );
}

/**
 * `bus migrate-queues`: makes each consumer group's classic work queue (a deployment made before
 * Locus used quorum queues) a quorum queue, keeping its messages. Groups whose consumers still
 * run are refused and named; the others are migrated.
 */
export async function migrateQueues(
  infra: Infrastructure,
  config: LocusConfig,
  out: (line: string) => void,
): Promise<boolean> {
  if (config.adapters.bus !== "rabbitmq") {
    throw new OperatorError(
      "Only RabbitMQ's queues have a type (LOCUS_BUS=rabbitmq); the in-process bus has none",
    );
  }
  if (config.busQueueType !== "quorum") {
    throw new OperatorError(
      "LOCUS_BUS_QUEUE_TYPE is classic: unset it (or set quorum) to migrate to quorum queues",
    );
  }
  const broker = await infra.broker();
  if (!broker) throw new OperatorError("No RabbitMQ bus is configured (AMQP_URL)");
  let refused = 0;
  for (const [group, topics] of Object.entries(consumerGroupsOf(config))) {
    try {
      const [result] = await broker.migrateQueues({ [group]: topics });
      if (!result) continue;
      const said = {
        migrated: `migrated to a quorum queue, ${result.moved} message(s) kept`,
        quorum: "a quorum queue already",
        absent: "not declared yet (declared as a quorum queue when a process starts)",
      }[result.outcome];
      out(`  ${group}: ${said}`);
    } catch (err) {
      if (!(err instanceof QueueInUseError)) throw err;
      refused += 1;
      out(`  ${group}: refused: ${err.message}`);
    }
  }
  out(
    refused === 0
      ? "Every work queue is a quorum queue; start the consumers again."
      : `${refused} group(s) refused: stop their consumers and run this again (the others are done).`,
  );
  return refused === 0;
}
