import { Router } from "express";
import { SearchResponseDto, type SearchMode } from "@locus/contracts";
import { callerOf, ServiceClient, type ServiceIdentity } from "@locus/http";
import type { SearchApi, SearchRequest } from "./search-service.ts";

/**
 * The search process's internal interface: the gateway validates the public request, then asks
 * here as the user its service token names. Never exposed publicly.
 */
export function searchInternalRouter(search: SearchApi, identity: ServiceIdentity): Router {
  const router = Router();
  router.get("/internal/search", identity.require("search"), async (req, res) => {
    const query = req.query as Record<string, string | undefined>;
    res.json(
      await search.search({
        userId: callerOf(res),
        q: query.q ?? "",
        limit: Number(query.limit ?? 50),
        mode: (query.mode ?? "quick") as SearchMode,
      }),
    );
  });
  return router;
}

/** SearchApi over HTTP, for a gateway that runs apart from search; answers are checked against their schema. */
export class SearchHttpClient implements SearchApi {
  private readonly client: ServiceClient;

  constructor(baseUrl: string, identity: ServiceIdentity) {
    this.client = new ServiceClient(baseUrl, "search", identity);
  }

  search(request: SearchRequest): Promise<SearchResponseDto> {
    const params = new URLSearchParams({ q: request.q, limit: String(request.limit), mode: request.mode });
    return this.client.json(request.userId, `/internal/search?${params.toString()}`, SearchResponseDto);
  }
}
