export { SearchHttpClient, searchInternalRouter } from "./search-http.ts";
export { SearchService, type SearchApi, type SearchRequest } from "./search-service.ts";
