export { ExtractionPool, type PoolOptions, type ScanReader } from "./extraction-pool.ts";
export { scanReader, type ScannedPageOptions } from "./scan-reader.ts";
