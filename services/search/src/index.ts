export { SearchHttpClient, searchInternalRouter } from "./search-http.ts";
export { SearchService, type AiEngines, type SearchApi, type SearchRequest } from "./search-service.ts";
export { fuse, rankAi, type FusedHit } from "./hybrid-ranking.ts";
export { ObservedSearch, type SearchObserver } from "./observed-search.ts";
