export * from "./http.ts";
export * from "./locus-process.ts";
export * from "./pdf-factory.ts";
