export * from "./errors.ts";
export * from "./files.ts";
export * from "./locator.ts";
export * from "./messages.ts";
export * from "./search.ts";
