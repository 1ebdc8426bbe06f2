import type { Router } from "express";
import { FileFilter, SearchMode, SearchResponseDto } from "@locus/contracts";
import { internalService, wire, type ServiceIdentity } from "@locus/http";
import type { SearchApi } from "./search-service.ts";

/**
 * The search process's internal interface: the gateway validates the public request, then asks
 * here as the user its service token names. Never exposed publicly.
 */
const internal = internalService<SearchApi>("search", (op) => ({
  search: op({
    method: "GET",
    path: "/internal/search",
    query: wire.query({
      q: wire.text.default(""),
      limit: wire.int.default(50),
      mode: SearchMode.default("quick"),
      offset: wire.int.optional(),
      filter: wire.json(FileFilter).optional(),
    }),
    answer: SearchResponseDto,
    send: ({ userId, offset, ...query }) => ({
      user: userId,
      query: { ...query, offset: offset || undefined },
    }),
    serve: (search, { user, query }) => search.search({ userId: user, ...query }),
  }),
}));

export const searchInternalRouter = (search: SearchApi, identity: ServiceIdentity): Router =>
  internal.router(identity, search);

/** SearchApi over HTTP, for a gateway that runs apart from search; answers are checked against their schema. */
export class SearchHttpClient extends internal.Client implements SearchApi {}
