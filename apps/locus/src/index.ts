export { Infrastructure } from "./infrastructure.ts";
export { moduleDescriptors, type Running } from "./modules.ts";
