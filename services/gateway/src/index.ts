export { generateApiKey, hashApiKey, keyTypeOf, type NewApiKey } from "./api-keys.ts";
export { createGatewayApp, type GatewayDeps } from "./app.ts";
export { startGatewayModule, type GatewayModule } from "./gateway-module.ts";
export { openApiDocument } from "./openapi.ts";
export { SANDBOX_FILE_ID } from "./sandbox.ts";
