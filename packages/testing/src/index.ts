export * from "./http.ts";
export * from "./locus-process.ts";
export * from "./pdf-factory.ts";
export * from "./signing-s3-server.ts";
export * from "./split-stack.ts";
export * from "./image-factory.ts";
export * from "./media-factory.ts";
