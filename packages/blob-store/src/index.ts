export * from "./blob-store.ts";
export { LocalBlobStore } from "./local-blob-store.ts";
