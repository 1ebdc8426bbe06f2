export * from "./errors.ts";
export * from "./files.ts";
export * from "./locator.ts";
export * from "./messages.ts";
export * from "./search.ts";
export * from "./blob-keys.ts";
export * from "./kinds.ts";
