// Search that reports each answer's time, and each fallback to a local engine (for metrics).

import type { AiFallbackDto, SearchMode, SearchResponseDto } from "@locus/contracts";
import type { SearchApi, SearchRequest } from "./search-service.ts";

/** What search tells whoever counts. `backend` is the index's adapter (sqlite, postgres, elasticsearch). */
export interface SearchObserver {
  searchAnswered(mode: SearchMode, backend: string, outcome: "ok" | "error", seconds: number): void;
  searchFellBack(component: AiFallbackDto["component"]): void;
}

/** `search`, timed where it runs (the search service), so both shapes count the same work. */
export class ObservedSearch implements SearchApi {
  constructor(
    private readonly inner: SearchApi,
    private readonly observer: SearchObserver,
    private readonly backend: string,
  ) {}

  async search(request: SearchRequest): Promise<SearchResponseDto> {
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
