export * from "./metadata-store.ts";
export { KyselyMetadataStore } from "./kysely-metadata-store.ts";
export { createSqliteMetadataStore } from "./sqlite-metadata-store.ts";
