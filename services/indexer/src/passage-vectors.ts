import type { ExtractedPassage } from "@locus/contracts";
import { isZero, type Embedder } from "@locus/embedder";
import type { IndexedPassage, PassageVectors } from "@locus/search-index";

/**
 * The engines that make passage vectors: the offline one, unless the meaning stage (the encoder
 * group) gives them after the file is ready; a remote one when configured.
 */
export interface PassageEmbedders {
  local?: Embedder;
  remote?: Embedder;
}

/** Passages embedded per call: one request to a remote engine. */
const BATCH = 64;

export interface EmbedOptions {
  /**
   * What a failing remote engine does to the file: `throw` (the default) fails this attempt so the
   * bus retries it later; `skip` indexes the rest of the file without remote vectors (its passages
   * are still found by keyword and by the local vectors), for the last attempt.
   */
  onRemoteFailure?: "throw" | "skip";
  /** Told once per file when remote vectors are skipped. */
  onSkip?: (err: unknown) => void;
}

/**
 * The passages with their vectors, computed a batch at a time as the stream is read, so a file of
 * any size is embedded in bounded memory. A passage with no word an engine knows gets no vector
 * from it (a zero vector matches nothing and some engines refuse them).
 */
export async function* withVectors(
  passages: AsyncIterable<ExtractedPassage>,
  embedders: PassageEmbedders,
  options: EmbedOptions = {},
): AsyncGenerator<IndexedPassage> {
  let remote = embedders.remote;
  const embed = async (batch: ExtractedPassage[]): Promise<IndexedPassage[]> => {
    const texts = batch.map((p) => p.content);
    const local = embedders.local ? await embedders.local.embed(texts) : [];
    let remoteVectors: Float32Array[] | undefined;
    if (remote) {
      try {
        remoteVectors = await remote.embed(texts);
      } catch (err) {
        if (options.onRemoteFailure !== "skip") throw err;
        options.onSkip?.(err);
        // One failure is enough to stop asking for this file: a server that is down would cost
        // a timeout per batch.
        remote = undefined;
      }
    }
    return batch.map((passage, i) => {
      const vectors: PassageVectors = {};
      const l = local[i];
      if (l && embedders.local && !isZero(l)) vectors.local = { space: embedders.local.space, vector: l };
      const r = remoteVectors?.[i];
      if (r && embedders.remote && !isZero(r)) vectors.remote = { space: embedders.remote.space, vector: r };
      return { ...passage, vectors };
    });
  };

  let batch: ExtractedPassage[] = [];
  for await (const passage of passages) {
    batch.push(passage);
    if (batch.length >= BATCH) {
      yield* await embed(batch);
      batch = [];
    }
  }
  if (batch.length > 0) yield* await embed(batch);
}
