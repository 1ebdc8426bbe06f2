export { SearchHttpClient, searchInternalRouter } from "./search-http.ts";
export { SearchService, type AiEngines, type SearchApi, type SearchRequest } from "./search-service.ts";
export { fuse, type FusedHit } from "./hybrid-ranking.ts";
