export { createGatewayRouter, type GatewayDeps, type GatewayObserver } from "./app.ts";
export type { KeyRefusal, Principal, SessionAuthenticator } from "./authenticate.ts";
export { multipartErrors } from "./multer-errors.ts";
export { openApiDocument } from "./openapi.ts";
export { SANDBOX_FILE_ID } from "./sandbox.ts";
export { KeyLookupCache, type KeyLookup } from "./key-lookup-cache.ts";
