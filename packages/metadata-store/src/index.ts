export * from "./metadata-store.ts";
export { KyselyMetadataStore, type KyselyMetadataStoreOptions } from "./kysely-metadata-store.ts";
export { createSqliteMetadataStore } from "./sqlite-metadata-store.ts";
export { createPostgresMetadataStore, type PostgresMetadataStoreOptions } from "./postgres-metadata-store.ts";
export { generateApiKey, hashApiKey, keyTypeOf, type NewApiKey } from "./api-keys.ts";
