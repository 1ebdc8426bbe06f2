import { execFileSync } from "node:child_process";
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { PdfBenchOptions, PdfBenchResult } from "./pdf-ingestion.ts";
import {
  QUERY_CLASS_DESCRIPTIONS,
  QUERY_CLASSES,
  type ClassResult,
  type SearchBenchOptions,
  type SearchSizeResult,
} from "./search-latency.ts";

export const REPORT_DIR = join(dirname(fileURLToPath(import.meta.url)), "report");

export interface Machine {
  nproc: number;
  totalMemoryGiB: number;
  cpuModel: string;
  node: string;
  platform: string;
  commit: string;
  /** 1-minute load average when the run started and when it ended: how busy the machine was. */
  loadAverage: { start: number; end: number };
}

export interface Target {
  name: string;
  goal: string;
  measured: string;
  /** null when the benchmark that measures it did not run or crashed. */
  pass: boolean | null;
}

export interface Report {
  date: string;
  durationSeconds: number;
  machine: Machine;
  /** What was run: the benchmark options, for comparing like with like. */
  options: { search: SearchBenchOptions | null; pdf: PdfBenchOptions | null };
  targets: Target[];
  search: SearchSizeResult[];
  pdf: PdfBenchResult | null;
  /** Benchmarks that crashed, with the error. */
  errors: { benchmark: string; error: string }[];
}

function tryExec(cmd: string, args: string[]): string | null {
  try {
    return execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return null;
  }
}

export function machine(loadAtStart: number): Machine {
  const nproc = Number(tryExec("nproc", []) ?? os.availableParallelism());
  const commit = tryExec("git", ["rev-parse", "--short", "HEAD"]) ?? "unknown";
  const dirty = (tryExec("git", ["status", "--porcelain"]) ?? "") !== "";
  return {
    nproc,
    totalMemoryGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    cpuModel: os.cpus()[0]?.model.trim() ?? "unknown",
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    commit: dirty ? `${commit} (with uncommitted changes)` : commit,
    loadAverage: { start: loadAtStart, end: Math.round(os.loadavg()[0]! * 100) / 100 },
  };
}

export function evaluateTargets(search: SearchSizeResult[], pdf: PdfBenchResult | null): Target[] {
  const largest = search.find((s) => s.passages === 100_000);
  return [
    {
      name: "Quick search p50 at 100k passages",
      goal: "≤ 10 ms",
      measured: largest ? `${largest.overall.latencyMs.p50} ms` : "not measured",
      pass: largest ? largest.overall.latencyMs.p50 <= 10 : null,
    },
    {
      name: "Text PDF ingestion throughput (300 pages)",
      goal: "≥ 100 pages/s",
      measured: pdf ? `${pdf.large.medianPagesPerSecond} pages/s` : "not measured",
      pass: pdf ? pdf.large.medianPagesPerSecond >= 100 : null,
    },
    {
      name: "15-page PDF ready after upload",
      goal: "< 2 s",
      measured: pdf ? `${(pdf.small.medianReadyMs / 1000).toFixed(2)} s` : "not measured",
      pass: pdf ? pdf.small.medianReadyMs < 2000 : null,
    },
  ];
}

const verdict = (pass: boolean | null) => (pass === null ? "not measured" : pass ? "✅ pass" : "❌ miss");
const table = (head: string[], rows: (string | number)[][]) =>
  [
    `| ${head.join(" | ")} |`,
    `| ${head.map((h, i) => (i === 0 ? "---" : "---:")).join(" | ")} |`,
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ].join("\n");
const fmt = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? "–" : String(v));

function classRow(name: string, c: ClassResult): (string | number)[] {
  const l = c.latencyMs;
  return [
    name,
    c.queries,
    fmt(l.p50),
    fmt(l.p95),
    fmt(l.p99),
    fmt(l.mean),
    fmt(l.max),
    fmt(c.serverMs?.p50),
    c.meanResults,
  ];
}

export function renderMarkdown(r: Report): string {
  const m = r.machine;
  const out: string[] = [];
  out.push("# Locus benchmark report", "");
  out.push(`- Date: ${r.date} (took ${Math.round(r.durationSeconds)} s)`);
  out.push(`- Machine: ${m.nproc} CPUs (\`nproc\`), ${m.totalMemoryGiB} GiB RAM, ${m.cpuModel}`);
  out.push(`- Node ${m.node}, ${m.platform}; commit ${m.commit}`);
  out.push(`- 1-minute load average: ${m.loadAverage.start} at the start, ${m.loadAverage.end} at the end`);
  out.push(
    "- Shape: all-in-one (`pnpm start`: SQLite metadata + FTS5 index, local blobs, in-process bus), server and benchmark on 127.0.0.1",
  );
  out.push("- The machine is shared and noisy: read medians, and compare runs on the same machine only.", "");

  if (r.errors.length > 0) {
    out.push("## Crashed benchmarks", "");
    for (const e of r.errors)
      out.push(`- **${e.benchmark}**: \`${e.error.replace(/`/g, "'").split("\n")[0]}\``);
    out.push("");
  }

  out.push("## Targets", "");
  out.push(
    table(
      ["target", "goal", "measured", "result"],
      r.targets.map((t) => [t.name, t.goal, t.measured, verdict(t.pass)]),
    ),
    "",
  );

  if (r.search.length > 0) {
    out.push("## Quick search latency over HTTP", "");
    out.push(
      "Sequential `GET /api/search?mode=quick&limit=50` on one keep-alive connection, after a warm-up. " +
        "Latency is client-side, from sending the request to the last byte of the response; " +
        '"server p50" is what the gateway logged for the same requests. ' +
        "Datasets are written through `SqliteSearchIndex.replaceFilePassages` and `createFile` (ready records, 50 passages per file) " +
        "before the server starts; passages are ~300 characters of Zipf-distributed words, and a second user holds another 25% of passages.",
      "",
    );
    out.push(
      table(
        [
          "passages",
          "files",
          "other user's passages",
          "index size",
          "load (passages/s)",
          "queries",
          "p50 ms",
          "p95 ms",
          "p99 ms",
          "mean ms",
          "server p50 ms",
        ],
        r.search.map((s) => [
          s.passages.toLocaleString("en"),
          s.files.toLocaleString("en"),
          s.otherTenantPassages.toLocaleString("en"),
          `${Math.round(s.indexBytes / 1024 ** 2)} MiB`,
          `${s.loadSeconds} s (${s.loadPassagesPerSecond.toLocaleString("en")})`,
          `${s.measuredQueries}${s.stoppedByTimeBudget ? " (time budget hit)" : ""}`,
          fmt(s.overall.latencyMs.p50),
          fmt(s.overall.latencyMs.p95),
          fmt(s.overall.latencyMs.p99),
          fmt(s.overall.latencyMs.mean),
          fmt(s.overall.serverMs?.p50),
        ]),
      ),
      "",
    );
    for (const s of r.search) {
      out.push(`### ${s.passages.toLocaleString("en")} passages, by query class`, "");
      const rows = QUERY_CLASSES.flatMap((cls) => {
        const c = s.byClass[cls];
        return c ? [classRow(cls, c)] : [];
      });
      rows.push(classRow("**all**", s.overall));
      out.push(
        table(
          ["class", "n", "p50 ms", "p95 ms", "p99 ms", "mean ms", "max ms", "server p50 ms", "mean results"],
          rows,
        ),
        "",
      );
      out.push(
        `Slowest queries: ${s.slowest.map((x) => `"${x.q}" (${x.cls}, ${x.results} results) ${x.ms} ms`).join("; ")}.`,
        "",
      );
      out.push(
        `Checks: results from another user's files: ${s.checks.tenancyLeaks}; ` +
          `phrase queries that found exactly the 3 planted passages, phrase first: ${s.checks.phraseQueriesExact}; ` +
          `absent-word queries with no result: ${s.checks.absentQueriesEmpty}.`,
        "",
      );
    }
    out.push(
      "Query classes: " +
        QUERY_CLASSES.map((c) => `\`${c}\`: ${QUERY_CLASS_DESCRIPTIONS[c]}`).join("; ") +
        ". With ~50 queries per class, a class's p99 is close to its maximum.",
      "",
    );
  }

  if (r.pdf) {
    const p = r.pdf;
    out.push("## PDF ingestion", "");
    out.push(
      `Text PDFs made with pdfkit (${p.small.linesPerPage} lines of ~70 characters per page), uploaded one at a time through \`POST /api/files/upload\` ` +
        'by a pro user, after one unmeasured warm-up upload. "Ready" is measured from the upload response to the first `GET /api/files/{id}` ' +
        'that reports `ready` (polled every N ms, shown); "server" is the ready record\'s `updated_at − created_at` ' +
        "(from the start of the upload to ready, on the server's clock, millisecond resolution).",
      "",
    );
    out.push(
      table(
        [
          "document",
          "runs",
          "size",
          "upload ms",
          "ready ms (median)",
          "server ms (median)",
          "pages/s (median)",
          "server pages/s (median)",
          "poll ms",
          "passages",
        ],
        [p.small, p.large].map((s) => [
          `${s.pages} pages`,
          s.runs.length,
          `${Math.round((s.runs[0]?.bytes ?? 0) / 1024)} KiB`,
          fmt(s.medianUploadMs),
          fmt(s.medianReadyMs),
          fmt(s.medianServerReadyMs),
          fmt(s.medianPagesPerSecond),
          fmt(s.medianServerPagesPerSecond),
          s.pollMs,
          s.runs[0]?.passageCount ?? 0,
        ]),
      ),
      "",
    );
    out.push("Every run (ready ms after the upload response):");
    for (const s of [p.small, p.large])
      out.push(`- ${s.pages} pages: ${s.runs.map((x) => x.readyMs).join(", ")}`);
    out.push("");
  }
  out.push(
    "Figures in `bench/report/latest.json`. Run again with `pnpm bench` (options: `pnpm bench --help`).",
    "",
  );
  return out.join("\n");
}

export function writeReport(r: Report): { md: string; json: string } {
  mkdirSync(REPORT_DIR, { recursive: true });
  const md = join(REPORT_DIR, "latest.md");
  const json = join(REPORT_DIR, "latest.json");
  // Written beside and renamed, so an interrupted run never leaves half a report.
  const write = (path: string, text: string) => {
    writeFileSync(`${path}.tmp`, text);
    renameSync(`${path}.tmp`, path);
  };
  write(md, renderMarkdown(r));
  write(json, `${JSON.stringify(r, null, 2)}\n`);
  return { md, json };
}
