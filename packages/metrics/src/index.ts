export { LocusMetrics } from "./metrics.ts";
