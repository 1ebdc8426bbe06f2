import { createInterface } from "node:readline";
import { ExtractedPassage } from "@locus/contracts";
import type { BlobStore } from "./blob-store.ts";

/**
 * A stored extraction (JSON lines, one passage each, as extractors write them), read and checked
 * passage by passage: the indexer indexes it, the files service shows it, a rebuild re-reads it.
 */
export async function* readExtraction(blobs: BlobStore, key: string): AsyncGenerator<ExtractedPassage> {
  const lines = createInterface({ input: await blobs.get(key), crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.length > 0) yield ExtractedPassage.parse(JSON.parse(line));
  }
}
