// Where the benchmarks read and write, from this file's place in bench/ (one place to change if
// the folders move again).
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** bench/ itself. */
export const BENCH_DIR = join(dirname(fileURLToPath(import.meta.url)), "..");
/** The repository's root. */
export const ROOT = join(BENCH_DIR, "..");
/** The benchmarks' real material, kept in git (bench/fixtures). */
export const FIXTURES_DIR = join(BENCH_DIR, "fixtures");
/** Downloads and built indexes kept across runs, outside git (bench/.cache). */
export const CACHE_DIR = join(BENCH_DIR, ".cache");
/** The reports: latest.md and latest.json, snapshots, the Elasticsearch sizing runs (bench/report). */
export const REPORT_DIR = join(BENCH_DIR, "report");
