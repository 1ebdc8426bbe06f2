import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { AiAnswersOptions, AiAnswersResult } from "./ai-answers.ts";
import type { AiBenchOptions, AiBenchResult } from "./ai-search.ts";
import type { DocumentsBenchOptions, DocumentsBenchResult } from "./documents.ts";
import type { DocumentsQualityOptions, DocumentsQualityResult } from "./documents-quality.ts";
import type { MediaBenchOptions, MediaBenchResult } from "./media.ts";
import type { OcrBenchOptions, OcrBenchResult } from "./ocr.ts";
import type { PdfBenchOptions, PdfBenchResult } from "./pdf-ingestion.ts";
import type { QualityBenchOptions, QualityBenchResult } from "./quality.ts";
import { judgeTargets, withOrigins, type SectionOrigin } from "./provenance.ts";
import { renderMarkdown } from "./report-markdown.ts";
import { evaluateTargets } from "./report-targets.ts";
import type { SplitBenchOptions, SplitBenchResult } from "./split.ts";
import type { SearchBenchOptions, SearchSizeResult } from "./search-latency.ts";

// The report is put together from: target evaluation (report-targets.ts), the markdown
// (report-markdown.ts, with a report-render-<section>.ts per larger section) and the table and
// number cells they share (report-format.ts). Importers keep importing these from here.
export { evaluateTargets, renderMarkdown };
export { fmt, table } from "./report-format.ts";

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
  /** null when the benchmark that measures it did not run or crashed, or its figure is from an earlier run. */
  pass: boolean | null;
  /** The report section whose figures it is judged on. */
  section?: Section;
  /** Set when the figure was not measured in this run: the run that measured it (no verdict then). */
  earlierRun?: SectionOrigin;
}

export interface Report {
  date: string;
  durationSeconds: number;
  machine: Machine;
  /** What was run: the benchmark options, for comparing like with like. */
  options: {
    search: SearchBenchOptions | null;
    ai: AiBenchOptions | null;
    pdf: PdfBenchOptions | null;
    ocr: OcrBenchOptions | null;
    media: MediaBenchOptions | null;
    split: SplitBenchOptions | null;
    quality?: QualityBenchOptions | null;
    /** ai answers on the real manuals: run with the ai section. */
    aiAnswers?: AiAnswersOptions | null;
    documents?: DocumentsBenchOptions | null;
    documentsQuality?: DocumentsQualityOptions | null;
  };
  targets: Target[];
  search: SearchSizeResult[];
  /** ai mode with the default engines (or LOCUS_EMBEDDER's), when that benchmark ran. */
  ai: AiBenchResult | null;
  pdf: PdfBenchResult | null;
  ocr: OcrBenchResult | null;
  media: MediaBenchResult | null;
  /** Split-shape figures, when that benchmark ran. */
  split: SplitBenchResult | null;
  /** Retrieval quality on real material (bench/fixtures/quality), when that benchmark ran. */
  quality?: QualityBenchResult | null;
  /** Whether ai mode's summaries answer hand-written questions on real manuals (with the ai section). */
  aiAnswers?: AiAnswersResult | null;
  /** Office documents to PDF: Locus's converter against the soffice command (real documents), when that benchmark ran. */
  documents?: DocumentsBenchResult | null;
  /** Retrieval quality on real office and text documents (bench/fixtures/documents/queries.json), when that benchmark ran. */
  documentsQuality?: DocumentsQualityResult | null;
  /** Benchmarks that crashed, with the error. */
  errors: { benchmark: string; error: string }[];
  /** Sections a partial run (`--only`) kept from earlier reports, each with the date it was measured. */
  carriedOver?: Partial<Record<Section, string>>;
  /** Every section with figures: when and at which commit it was measured, and whether by this run. */
  sections?: Partial<Record<Section, SectionOrigin>>;
}

export type Section =
  "search" | "ai" | "pdf" | "ocr" | "media" | "split" | "quality" | "documents" | "documentsQuality";

/**
 * A partial run (`--only x`) keeps the other sections of the last report instead of dropping them,
 * and says so: the report then holds figures from several runs, each section with its own options
 * and the date and commit it was measured at (bench/provenance.ts). A full run (`ran` holding every
 * section) keeps nothing.
 */
export function carryOver(r: Report, ran: readonly Section[]): Report {
  let previous: Partial<Report> | null;
  try {
    previous = JSON.parse(readFileSync(join(REPORT_DIR, "latest.json"), "utf8")) as Partial<Report>;
  } catch {
    previous = null;
  }
  return withOrigins(r, ran, previous);
}

/** The targets on a report's figures, judged only where the figure was measured in this run. */
export function reportTargets(r: Report): Target[] {
  return judgeTargets(
    evaluateTargets(r.search, r.pdf, r.ocr, r.media, r.ai, r.aiAnswers ?? null, r.split),
    r.sections,
  );
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
