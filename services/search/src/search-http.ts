import { Router } from "express";
import { FileFilter, LocusError, SearchResponseDto, type SearchMode } from "@locus/contracts";
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
        offset: Number(query.offset ?? 0),
        filter: query.filter === undefined ? undefined : readFilter(query.filter),
      }),
    );
  });
  return router;
}

/** The filter as the gateway sends it: JSON, checked against its schema (another version's would fail here). */
function readFilter(encoded: string): FileFilter {
  try {
    return FileFilter.parse(JSON.parse(encoded));
  } catch {
    throw new LocusError("bad_request", "The filter sent by the gateway could not be read.");
  }
}

/** SearchApi over HTTP, for a gateway that runs apart from search; answers are checked against their schema. */
export class SearchHttpClient implements SearchApi {
  private readonly client: ServiceClient;

  constructor(baseUrl: string, identity: ServiceIdentity) {
    this.client = new ServiceClient(baseUrl, "search", identity);
  }

  search(request: SearchRequest): Promise<SearchResponseDto> {
    const params = new URLSearchParams({ q: request.q, limit: String(request.limit), mode: request.mode });
    if (request.offset) params.set("offset", String(request.offset));
    if (request.filter) params.set("filter", JSON.stringify(request.filter));
    return this.client.json(request.userId, `/internal/search?${params.toString()}`, SearchResponseDto);
  }
}
