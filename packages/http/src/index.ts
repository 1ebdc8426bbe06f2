export * from "./errors.ts";
export * from "./http-server.ts";
export * from "./process-app.ts";
export * from "./service-client.ts";
export * from "./service-identity.ts";
export * from "./request-context.ts";
export * from "./client-address.ts";
export * from "./listed-files.ts";
