export * from "./backoff.ts";
export * from "./config.ts";
export * from "./logger.ts";
export * from "./modules.ts";
export * from "./split-layout.ts";
