export * from "./blob-store.ts";
export { LocalBlobStore } from "./local-blob-store.ts";
export { S3BlobStore, type S3BlobStoreOptions } from "./s3-blob-store.ts";
export { inlineContentDisposition } from "./content-disposition.ts";
export { readExtraction } from "./extraction.ts";
