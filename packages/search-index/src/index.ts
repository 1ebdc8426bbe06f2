export * from "./search-index.ts";
export { SqliteSearchIndex } from "./sqlite-search-index.ts";
