/**
 * `pnpm bench`: measures quick-search latency and PDF ingestion against the real server (all-in-one,
 * then the split shape: ingestion with one and two PDF workers, search through the gateway), writes
 * bench/report/latest.md and latest.json, and prints a summary. A missed target is reported, not
 * a failure; a benchmark that crashes makes the process exit 1 (after the others have run and
 * the report is written). Everything it starts is stopped and removed, on error and on Ctrl-C too.
 */
import os from "node:os";
import { parseArgs } from "node:util";
import { cleanupAll, shutDown } from "./cleanup.ts";
import { benchPdfIngestion, DEFAULT_PDF_OPTIONS, type PdfBenchResult } from "./pdf-ingestion.ts";
import { evaluateTargets, machine, writeReport, type Report } from "./report.ts";
import { benchSearchSize, DEFAULT_SEARCH_OPTIONS, type SearchSizeResult } from "./search-latency.ts";
import {
  benchSplitIngestion,
  benchSplitSearch,
  compareWithAllInOne,
  DEFAULT_SPLIT_OPTIONS,
  emptySplitResult,
} from "./split.ts";

const USAGE = `Usage: pnpm bench [options]
  --only search|pdf|split  run one benchmark only (split: ingestion and search in the split shape)
  --sizes 10000,100000     passages per search dataset, in both shapes (default ${DEFAULT_SEARCH_OPTIONS.sizes.join(",")})
  --queries N              measured searches per dataset (default ${DEFAULT_SEARCH_OPTIONS.queries})
  --timeout-min N          stop everything and fail after N minutes (default 25)
`;

const { values } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== "--"),
  options: {
    only: { type: "string" },
    sizes: { type: "string" },
    queries: { type: "string" },
    "timeout-min": { type: "string" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const positiveInt = (name: string, raw: string): number => {
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) {
    process.stderr.write(`--${name} must be a positive integer, got "${raw}"\n${USAGE}`);
    process.exit(2);
  }
  return n;
};
const only = values.only;
if (only !== undefined && only !== "search" && only !== "pdf" && only !== "split") {
  process.stderr.write(`--only must be search, pdf or split\n${USAGE}`);
  process.exit(2);
}
const searchOptions = {
  ...DEFAULT_SEARCH_OPTIONS,
  ...(values.sizes ? { sizes: values.sizes.split(",").map((s) => positiveInt("sizes", s.trim())) } : {}),
  ...(values.queries ? { queries: positiveInt("queries", values.queries) } : {}),
};
const timeoutMs = positiveInt("timeout-min", values["timeout-min"] ?? "25") * 60_000;

const started = performance.now();
const loadAtStart = Math.round(os.loadavg()[0]! * 100) / 100;
const log = (line: string) =>
  console.log(`[bench ${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}`);

async function abort(reason: string, code: number): Promise<never> {
  console.error(`bench: ${reason}; cleaning up`);
  await shutDown(reason);
  process.exit(code);
}
process.on("SIGINT", () => void abort("interrupted", 130));
process.on("SIGTERM", () => void abort("terminated", 143));
const watchdog = setTimeout(
  () => void abort(`time limit of ${timeoutMs / 60_000} minutes reached`, 1),
  timeoutMs,
);

const search: SearchSizeResult[] = [];
let pdf: PdfBenchResult | null = null;
const split = emptySplitResult();
const runs = (name: "search" | "pdf" | "split") => only === undefined || only === name;
const errors: Report["errors"] = [];

async function attempt(name: string, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    console.error(`bench: ${name} crashed:`, err);
    errors.push({ benchmark: name, error: err instanceof Error ? err.message : String(err) });
  }
}

if (runs("search")) {
  for (const size of searchOptions.sizes) {
    await attempt(`search latency at ${size} passages`, async () => {
      search.push(await benchSearchSize(size, searchOptions, log));
    });
  }
}
if (runs("pdf")) {
  await attempt("PDF ingestion", async () => {
    pdf = await benchPdfIngestion(DEFAULT_PDF_OPTIONS, log);
  });
}
if (runs("split")) {
  await attempt("split-mode ingestion", async () => {
    split.ingestion = await benchSplitIngestion(DEFAULT_SPLIT_OPTIONS.ingestion, log);
  });
  await attempt("split-mode search", () =>
    benchSplitSearch(searchOptions, DEFAULT_SPLIT_OPTIONS.search, split, log),
  );
  compareWithAllInOne(split, search);
}
clearTimeout(watchdog);
await cleanupAll();

const report: Report = {
  date: new Date().toISOString(),
  durationSeconds: Math.round((performance.now() - started) / 1000),
  machine: machine(loadAtStart),
  options: {
    search: runs("search") || runs("split") ? searchOptions : null,
    pdf: runs("pdf") ? DEFAULT_PDF_OPTIONS : null,
    split: runs("split") ? DEFAULT_SPLIT_OPTIONS : null,
  },
  targets: evaluateTargets(search, pdf),
  search,
  pdf,
  split: runs("split") ? split : null,
  errors,
};
const written = writeReport(report);

console.log("\nLocus benchmark summary");
for (const s of search) {
  const l = s.overall.latencyMs;
  console.log(
    `  quick search, ${s.passages} passages: p50 ${l.p50} ms, p95 ${l.p95} ms, p99 ${l.p99} ms, mean ${l.mean} ms (${s.measuredQueries} queries)`,
  );
}
const pdfResult = pdf as PdfBenchResult | null;
if (pdfResult) {
  console.log(
    `  PDF ${pdfResult.small.pages} pages: ready ${pdfResult.small.medianReadyMs} ms after upload (median of ${pdfResult.small.runs.length})`,
  );
  console.log(
    `  PDF ${pdfResult.large.pages} pages: ${pdfResult.large.medianPagesPerSecond} pages/s (median of ${pdfResult.large.runs.length})`,
  );
}
if (split.ingestion) {
  for (const c of split.ingestion.configs)
    console.log(
      `  split ingestion, ${c.workers} PDF worker(s): ${c.medianFilesPerSecond} files/s, ${c.medianPagesPerSecond} pages/s (median of ${c.rounds.length} batches of ${split.ingestion.files} × ${split.ingestion.pages} pages)`,
    );
  if (split.ingestion.scalingRatio !== null)
    console.log(
      `  split ingestion scaling, ${split.ingestion.configs.at(-1)?.workers} workers / ${split.ingestion.configs[0]?.workers}: ${split.ingestion.scalingRatio}× (server clock ${split.ingestion.serverScalingRatio}×; ${split.ingestion.cores} cores shared with Postgres, RabbitMQ and every service)`,
    );
}
for (const s of split.search) {
  const l = s.overall.latencyMs;
  console.log(
    `  split quick search via the gateway, ${s.passages} passages: p50 ${l.p50} ms, p95 ${l.p95} ms${s.ratioToAllInOne === null ? "" : ` (${s.ratioToAllInOne}× all-in-one's ${s.allInOneP50Ms} ms)`}`,
  );
}
for (const k of split.searchSkipped)
  console.log(`  split quick search, ${k.passages} passages: skipped (${k.reason})`);
for (const t of report.targets)
  console.log(
    `  target ${t.name} ${t.goal}: ${t.measured} -> ${t.pass === null ? "not measured" : t.pass ? "pass" : "MISS"}`,
  );
for (const e of errors) console.log(`  CRASHED ${e.benchmark}: ${e.error.split("\n")[0]}`);
console.log(`Report: ${written.md}\n        ${written.json}`);
process.exitCode = errors.length > 0 ? 1 : 0;
