export { Infrastructure } from "./infrastructure.ts";
export { buildLocus, type Locus } from "./build-locus.ts";
export { moduleDescriptors, type LocusModule } from "./modules.ts";
