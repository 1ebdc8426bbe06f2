export { SearchService, type SearchRequest } from "./search-service.ts";
