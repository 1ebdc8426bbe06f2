import { extractionBlobKey } from "@locus/contracts";
import { readExtraction, type BlobStore } from "@locus/blob-store";
import { fileAttributes, withVectors, type PassageEmbedders } from "@locus/indexer";
import type { FileStore } from "@locus/metadata-store";
import type { FilePassages, SearchIndex } from "@locus/search-index";

const PAGE = 500;

/**
 * Re-creates the search index from the extractions stored with every ready file: nothing is
 * extracted again, but every passage is embedded again with the configured engines (the way to
 * give vectors to passages indexed before ai mode, or to move to another embedding model). The
 * index rebuilds itself (SearchIndex.rebuild): one that can swap to a fresh copy (Elasticsearch,
 * behind its alias) gets everything at once; the others have each file's passages replaced in
 * turn, so searches keep working throughout.
 */
export async function rebuildSearchIndex(
  store: FileStore,
  blobs: BlobStore,
  index: SearchIndex,
  embedders: PassageEmbedders,
  progress: (line: string) => void,
): Promise<{ files: number; passages: number; missing: string[] }> {
  const missing: string[] = [];
  async function* sources(): AsyncGenerator<FilePassages> {
    let afterId: string | undefined;
    let seen = 0;
    for (;;) {
      const page = await store.listFilesWithStatus("ready", { limit: PAGE, ...(afterId ? { afterId } : {}) });
      for (const record of page) {
        const key = extractionBlobKey(record.userId, record.id);
        if (!(await blobs.stat(key))) {
          missing.push(record.id);
          continue;
        }
        // A remote engine that fails stops the rebuild (after its own retries) rather than leave
        // passages without the vectors the rebuild was run to make.
        yield {
          file: { userId: record.userId, fileId: record.id, attributes: fileAttributes(record) },
          passages: withVectors(readExtraction(blobs, key), embedders),
        };
      }
      seen += page.length;
      if (page.length < PAGE) return;
      afterId = page.at(-1)?.id;
      progress(`${seen} ready files read so far`);
    }
  }

  return { ...(await index.rebuild(sources())), missing };
}
