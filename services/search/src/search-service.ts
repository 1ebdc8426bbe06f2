import { LocusError, type SearchMode, type SearchResponseDto } from "@locus/contracts";
import type { MetadataStore } from "@locus/metadata-store";
import type { SearchIndex } from "@locus/search-index";
import { narrowToMatch } from "./match-lines.ts";

export interface SearchRequest {
  userId: string;
  q: string;
  limit: number;
  mode: SearchMode;
}

/**
 * Answers searches over one user's passages. Quick mode is BM25 in the index; each hit is joined
 * to its file record, and hits whose file is not `ready` (being re-indexed, or just deleted) are
 * left out, so a result always names a file the caller can fetch.
 */
export class SearchService {
  constructor(
    private readonly index: SearchIndex,
    private readonly store: MetadataStore,
  ) {}

  async search(request: SearchRequest): Promise<SearchResponseDto> {
    if (request.mode === "ai") {
      throw new LocusError(
        "not_implemented",
        "mode=ai is not available on this server yet; use mode=quick (keyword search).",
      );
    }
    const hits = await this.index.search({ userId: request.userId, text: request.q, limit: request.limit });
    const files = new Map(
      (await this.store.getFiles(request.userId, hits.map((h) => h.fileId))).map((f) => [f.id, f]),
    );
    const results: SearchResponseDto["results"] = [];
    for (const hit of hits) {
      const file = files.get(hit.fileId);
      if (!file || file.status !== "ready") continue;
      results.push({
        content: hit.content,
        score: hit.score,
        file_id: hit.fileId,
        locator: narrowToMatch(hit.content, hit.locator, request.q),
        files: { original_name: file.originalName, file_type: file.fileType },
      });
    }
    return { results, count: results.length, mode: request.mode };
  }
}
