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
 * What the gateway asks of search. In one process SearchService answers directly; in the split
 * shape SearchHttpClient carries the call to the search process.
 */
export interface SearchApi {
  search(request: SearchRequest): Promise<SearchResponseDto>;
}

/**
 * Answers searches over one user's passages. Quick mode is BM25 in the index; each hit is joined
 * to its file record, and hits whose file is not `ready` (being re-indexed, or just deleted) are
 * left out, so a result always names a file the caller can fetch.
 */
export class SearchService implements SearchApi {
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
    // Consecutive passages share a line, so one match can surface twice; fetch extra to make up
    // for the duplicates dropped below.
    const hits = await this.index.search({
      userId: request.userId,
      text: request.q,
      limit: Math.min(request.limit * 2, 200),
    });
    const files = new Map(
      (
        await this.store.getFiles(
          request.userId,
          hits.map((h) => h.fileId),
        )
      ).map((f) => [f.id, f]),
    );
    const results: SearchResponseDto["results"] = [];
    const seen = new Set<string>();
    for (const hit of hits) {
      const file = files.get(hit.fileId);
      if (!file || file.status !== "ready") continue;
      const locator = narrowToMatch(hit.content, hit.locator, request.q);
      // The same place in the same file is one result: keep the best-scored passage for it.
      const place = JSON.stringify([
        hit.fileId,
        locator.page,
        locator.line,
        locator.line_end,
        locator.timestamp,
      ]);
      if (seen.has(place)) continue;
      seen.add(place);
      results.push({
        content: hit.content,
        score: hit.score,
        file_id: hit.fileId,
        locator,
        files: { original_name: file.originalName, file_type: file.fileType },
      });
      if (results.length === request.limit) break;
    }
    return { results, count: results.length, mode: request.mode };
  }
}
