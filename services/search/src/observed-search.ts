// Search that reports each answer's time, and each fallback to a local engine (for metrics), and
// traces it.

import type { AiFallbackDto, SearchMode, SearchResponseDto } from "@locus/contracts";
import { Attr, inSpan } from "@locus/telemetry";
import type { SearchApi, SearchRequest } from "./search-service.ts";

/** What search tells whoever counts. `backend` is the index's adapter (sqlite, postgres, elasticsearch). */
export interface SearchObserver {
  searchAnswered(mode: SearchMode, backend: string, outcome: "ok" | "error", seconds: number): void;
  searchFellBack(component: AiFallbackDto["component"]): void;
}

/**
 * `search`, timed where it runs (the search service), so both shapes count the same work; each
 * search is a span `search <mode>` with its backend, limit, result count and the ai engines that
 * answered (the index queries, the question's vector and the summary are its children: see
 * SearchService). Never the query's text, nor the user.
 */
export class ObservedSearch implements SearchApi {
  constructor(
    private readonly inner: SearchApi,
    private readonly observer: SearchObserver,
    private readonly backend: string,
  ) {}

  search(request: SearchRequest): Promise<SearchResponseDto> {
    const attributes = {
      [Attr.searchMode]: request.mode,
      [Attr.searchBackend]: this.backend,
      [Attr.searchLimit]: request.limit,
    };
    return inSpan(`search ${request.mode}`, { attributes }, async (span) => {
      const response = await this.timed(request);
      span.setAttribute(Attr.searchResults, response.count);
      if (response.vector_source) span.setAttribute(Attr.aiEmbedder, response.vector_source);
      if (response.summary_source) span.setAttribute(Attr.aiSummarizer, response.summary_source);
      return response;
    });
  }

  private async timed(request: SearchRequest): Promise<SearchResponseDto> {
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    let response: SearchResponseDto;
    try {
      response = await this.inner.search(request);
    } catch (err) {
      this.observer.searchAnswered(request.mode, this.backend, "error", seconds());
      throw err;
    }
    this.observer.searchAnswered(request.mode, this.backend, "ok", seconds());
    for (const fallback of response.fallbacks ?? []) this.observer.searchFellBack(fallback.component);
    return response;
  }
}
