export { generateApiKey, hashApiKey, keyTypeOf, type NewApiKey } from "./api-keys.ts";
export { createGatewayRouter, type GatewayDeps, type GatewayObserver } from "./app.ts";
export type { KeyRefusal, Principal, SessionAuthenticator } from "./authenticate.ts";
export {
  memoryCounters,
  redisCounters,
  type CounterOptions,
  type LimiterCounters,
} from "./limiter-counters.ts";
export { multipartErrors } from "./multer-errors.ts";
export { openApiDocument } from "./openapi.ts";
export { SANDBOX_FILE_ID } from "./sandbox.ts";
