import { CONSUMER_GROUPS } from "@locus/contracts";
import type { Bus } from "@locus/bus";
import type { Embedder } from "@locus/embedder";
import type { Logger, RunningModule } from "@locus/runtime";
import { writesVectorsLater, type SearchIndex } from "@locus/search-index";
import { Attr, inSpan } from "@locus/telemetry";
import { PassageEncoder, type EncoderObserver } from "./passage-encoder.ts";

export interface EncoderDeps {
  index: SearchIndex;
  /** The offline engine of the `local` slot: the sentence encoder (or what stands in for it). */
  embedder: Embedder;
  bus: Bus;
  logger: Logger;
  maxAttempts: number;
  /** Told how many passages each file got vectors for (metrics). */
  observer?: EncoderObserver | undefined;
}

/**
 * Encodes each file's passages once the indexer has made them searchable by keyword (file.indexed),
 * in the `encoder` consumer group: the file is `ready` already, and its passages join ai mode's
 * vector ranking as they are encoded. A file that keeps failing here stays ready and found by
 * keyword; its message goes to the group's dead letters, where an operator can replay it.
 */
export async function startEncoderModule(deps: EncoderDeps): Promise<RunningModule> {
  const { index } = deps;
  if (!writesVectorsLater(index)) {
    throw new Error(
      "The encoder stage needs a search index that takes vectors after its passages (SQLite or PostgreSQL)",
    );
  }
  const encoder = new PassageEncoder(index, deps.embedder, deps.observer);
  await deps.bus.subscribe(
    {
      group: "encoder",
      topics: CONSUMER_GROUPS.encoder,
      // One file at a time: the model runs each passage on one thread, and the stage scales by
      // processes (pods), not by files at once in one.
      concurrency: 1,
      maxAttempts: deps.maxAttempts,
    },
    async ({ message, signal }) => {
      const { fileId, userId } = message;
      const started = Date.now();
      // A stop does not wait for a long file's encoding: it ends after the page in hand (about
      // two seconds), and the message is handed back for the next worker (Delivery.signal).
      const encoded = await inSpan("encode", { attributes: { [Attr.fileId]: fileId } }, () =>
        encoder.encodeFile({ fileId, userId }, signal),
      );
      deps.logger.info({ fileId, encoded, ms: Date.now() - started }, "passages encoded");
      // The file record says so (ai_vectors: ready); a file deleted meanwhile is ignored there.
      await deps.bus.publish("file.encoded", { fileId, userId, encoded });
    },
  );
  return { stop: () => Promise.resolve() };
}
