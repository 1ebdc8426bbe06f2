/**
 * `pnpm bench`: measures quick-search latency and PDF ingestion against the real server (all-in-one,
 * then the split shape: ingestion with one and two PDF workers, search through the gateway), writes
 * bench/report/latest.md and latest.json, and prints a summary. A missed target is reported, not
 * a failure; a benchmark that crashes makes the process exit 1 (after the others have run and
 * the report is written). Everything it starts is stopped and removed, on error and on Ctrl-C too.
 */
import os from "node:os";
import { parseArgs } from "node:util";
import { benchAiAnswers, DEFAULT_AI_ANSWERS_OPTIONS, type AiAnswersResult } from "./ai/ai-answers.ts";
import { benchAiSearch, DEFAULT_AI_OPTIONS, type AiBenchResult } from "./ai/ai-search.ts";
import {
  benchDocuments,
  DEFAULT_DOCUMENTS_OPTIONS,
  type DocumentsBenchResult,
} from "./documents/documents.ts";
import {
  benchElasticsearch,
  DEFAULT_ES_OPTIONS,
  describeError,
  esSummary,
  writeEsReport,
  type EsBenchOptions,
} from "./elasticsearch/elasticsearch.ts";
import { cleanupAll, shutDown } from "./harness/cleanup.ts";
import { machine } from "./harness/machine.ts";
import type { Section } from "./harness/targets.ts";
import { benchMedia, DEFAULT_MEDIA_OPTIONS, type MediaBenchResult } from "./media/media.ts";
import { benchOcr, DEFAULT_OCR_OPTIONS, type OcrBenchResult } from "./ocr/ocr.ts";
import {
  benchPdfIngestion,
  DEFAULT_PDF_OPTIONS,
  type PdfBenchResult,
  type PdfEngine,
} from "./pdf/pdf-ingestion.ts";
import {
  benchDocumentsQuality,
  DEFAULT_DOCUMENTS_QUALITY_OPTIONS,
  type DocumentsQualityResult,
} from "./quality/documents-quality.ts";
import { benchQuality, DEFAULT_QUALITY_OPTIONS, type QualityBenchResult } from "./quality/quality.ts";
import { targetSummaryLines, withOrigins } from "./reporting/provenance.ts";
import type { Report } from "./reporting/report.ts";
import { evaluateTargets } from "./reporting/report-targets.ts";
import { carryOver, reportTargets, writeReport } from "./reporting/report-writer.ts";
import { benchSearchSize, DEFAULT_SEARCH_OPTIONS, type SearchSizeResult } from "./search/search-latency.ts";
import { benchParity } from "./split/parity.ts";
import { benchSplitAi } from "./split/split-ai.ts";
import {
  benchSplitIngestion,
  benchSplitSearch,
  compareWithAllInOne,
  DEFAULT_SPLIT_OPTIONS,
  emptySplitResult,
} from "./split/split.ts";

const ES_TIMEOUT_MIN = 360;
const USAGE = `Usage: pnpm bench [options]
  --only search|ai|pdf|ocr|media|split|quality|documents|documents-quality
                           run one benchmark only, or several by commas (search,split: both
                           shapes' quick search from the same run, compared side by side)
                           (ai: ai-mode latency with the default engines at
                           ${DEFAULT_AI_OPTIONS.sizes.join(" and ")} real-text passages, hit@5 of ai against quick on paraphrased
                           questions (dev and test sets), the word vectors' load time and memory, then ai answers:
                           whether the summary states and cites the answer of hand-written questions on the
                           real manuals of bench/fixtures/quality; ocr: OCR throughput on 150-dpi scans, word accuracy
                           with each engine, a scanned PDF through the server, the real page images of
                           bench/fixtures/quality through the server with each engine against the tesseract command; media: speech real-time factor, word error
                           rate, a 10-minute recording through the server, video frames read per second;
                           split: ingestion and search in the split shape; quality: where results land
                           (hit@1, hit@5, MRR, locator error) on real PDFs, page images and recordings
                           in bench/fixtures/quality, quick and ai mode; documents: real office documents
                           of bench/fixtures/documents converted to PDF by Locus's converter and by the
                           soffice command in the same run, pages/s and peak memory per kind;
                           documents-quality: where results land (hit@1, hit@5, page and line) on
                           the real office documents and text files, quick and ai mode)
  --sizes 10000,100000     passages per search dataset, in both shapes (default ${DEFAULT_SEARCH_OPTIONS.sizes.join(",")})
  --queries N              measured searches per dataset (default ${DEFAULT_SEARCH_OPTIONS.queries};
                           with --only elasticsearch: per measured tenant, default ${DEFAULT_ES_OPTIONS.queries})
  --timeout-min N          stop everything and fail after N minutes (default 25; ${ES_TIMEOUT_MIN} with --only elasticsearch)

  --only elasticsearch     sizing figures for an Elasticsearch cluster (not part of the default run):
                           loads passages through ElasticsearchSearchIndex into its own index
                           (locus-bench-<random>, deleted afterwards), times searches, and writes
                           bench/report/elasticsearch-<date>.md and .json
  --es-url URL             the cluster (default $ELASTICSEARCH_URL, or $ELASTICSEARCH_CLOUD_ID);
                           credentials from $ELASTICSEARCH_API_KEY or $ELASTICSEARCH_USERNAME and
                           $ELASTICSEARCH_PASSWORD, a CA from $ELASTICSEARCH_CA_CERT (a PEM file),
                           $ELASTICSEARCH_REQUEST_TIMEOUT_MS and $ELASTICSEARCH_MAX_RETRIES as the server reads them
  --passages N             passages in all (default ${DEFAULT_ES_OPTIONS.passages})
  --tenants M              tenants, Zipf-sized (default ${DEFAULT_ES_OPTIONS.tenants})
  --concurrency C          files (of 50 passages) written at once (default ${DEFAULT_ES_OPTIONS.concurrency})
  --shards N, --replicas N the benchmark index's primary shards and replicas (default: the cluster's)
  --no-vectors             passages without vectors, and no kNN searches (the vectors are the sentence
                           encoder's, encoded once into bench/.cache/es-vectors: about an hour for the
                           whole real-text pool on 2 cores, the first time)
  --dry-run                run the whole flow against an in-process fake cluster (checks the script;
                           the figures mean nothing; writes bench/report/elasticsearch-dry-run-<date>.*)
`;

const { values } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== "--"),
  options: {
    only: { type: "string" },
    sizes: { type: "string" },
    queries: { type: "string" },
    "timeout-min": { type: "string" },
    "es-url": { type: "string" },
    passages: { type: "string" },
    tenants: { type: "string" },
    concurrency: { type: "string" },
    shards: { type: "string" },
    replicas: { type: "string" },
    "dry-run": { type: "boolean" },
    "no-vectors": { type: "boolean" },
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
const nonNegativeInt = (name: string, raw: string): number =>
  raw.trim() === "0" ? 0 : positiveInt(name, raw);
const BENCHMARKS = [
  "search",
  "ai",
  "pdf",
  "ocr",
  "media",
  "split",
  "quality",
  "documents",
  "documents-quality",
] as const;
type Benchmark = (typeof BENCHMARKS)[number];
/** The report section a benchmark writes (its name, but for documents-quality). */
const sectionOf = (name: Benchmark): Section => (name === "documents-quality" ? "documentsQuality" : name);
// One benchmark, or several by commas (`--only search,split`: both shapes' search from one run).
const onlyNames = values.only?.split(",").map((name) => name.trim());
const only = onlyNames?.length === 1 ? onlyNames[0] : values.only;
if (
  onlyNames !== undefined &&
  !(only === "elasticsearch" || onlyNames.every((name) => (BENCHMARKS as readonly string[]).includes(name)))
) {
  process.stderr.write(
    `--only must be search, ai, pdf, ocr, media, split, quality, documents, documents-quality (several by commas) or elasticsearch alone\n${USAGE}`,
  );
  process.exit(2);
}
const esOnly = [
  "es-url",
  "passages",
  "tenants",
  "concurrency",
  "shards",
  "replicas",
  "dry-run",
  "no-vectors",
] as const;
const misplaced = esOnly.filter((name) => values[name] !== undefined);
if (only !== "elasticsearch" && misplaced.length > 0) {
  process.stderr.write(`--${misplaced.join(", --")}: only with --only elasticsearch\n${USAGE}`);
  process.exit(2);
}
let esOptions: EsBenchOptions | null = null;
if (only === "elasticsearch") {
  const dryRun = values["dry-run"] === true;
  const url = values["es-url"] ?? process.env.ELASTICSEARCH_URL ?? "";
  const cloudId = url === "" ? (process.env.ELASTICSEARCH_CLOUD_ID ?? "") : "";
  if (!dryRun && url === "" && cloudId === "") {
    process.stderr.write(
      "bench: --only elasticsearch needs a cluster, and none was given.\n" +
        "  Pass --es-url https://host:9200 or set ELASTICSEARCH_URL (ELASTICSEARCH_CLOUD_ID for Elastic Cloud),\n" +
        "  with ELASTICSEARCH_API_KEY or ELASTICSEARCH_USERNAME/ELASTICSEARCH_PASSWORD if it needs them.\n" +
        "  It writes only to an index of its own (locus-bench-<random>) and deletes it afterwards.\n" +
        "  Or add --dry-run to check the benchmark against an in-process fake cluster.\n",
    );
    process.exit(2);
  }
  if (url !== "" && !/^https?:\/\/[^/]/.test(url)) {
    process.stderr.write(`--es-url must be an http(s) URL, got "${url}"\n`);
    process.exit(2);
  }
  esOptions = {
    url: dryRun || url === "" ? null : url,
    cloudId: dryRun || cloudId === "" ? null : cloudId,
    dryRun,
    passages: positiveInt("passages", values.passages ?? String(DEFAULT_ES_OPTIONS.passages)),
    tenants: positiveInt("tenants", values.tenants ?? String(DEFAULT_ES_OPTIONS.tenants)),
    queries: positiveInt("queries", values.queries ?? String(DEFAULT_ES_OPTIONS.queries)),
    concurrency: positiveInt("concurrency", values.concurrency ?? String(DEFAULT_ES_OPTIONS.concurrency)),
    shards: values.shards === undefined ? null : positiveInt("shards", values.shards),
    replicas: values.replicas === undefined ? null : nonNegativeInt("replicas", values.replicas),
    vectors: values["no-vectors"] !== true,
  };
  if (esOptions.passages < esOptions.tenants) {
    process.stderr.write(
      `--passages (${esOptions.passages}) must be at least --tenants (${esOptions.tenants})\n`,
    );
    process.exit(2);
  }
}
const searchOptions = {
  ...DEFAULT_SEARCH_OPTIONS,
  ...(values.sizes ? { sizes: values.sizes.split(",").map((s) => positiveInt("sizes", s.trim())) } : {}),
  ...(values.queries ? { queries: positiveInt("queries", values.queries) } : {}),
};
const timeoutMs =
  positiveInt("timeout-min", values["timeout-min"] ?? (esOptions ? String(ES_TIMEOUT_MIN) : "25")) * 60_000;

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

if (esOptions) {
  // Not part of the default run: it needs a cluster, and writes a report of its own.
  let code = 0;
  try {
    const report = await benchElasticsearch(esOptions, log, loadAtStart);
    const written = writeEsReport(report);
    console.log("");
    for (const line of esSummary(report)) console.log(line);
    console.log(`Report: ${written.md}\n        ${written.json}`);
    if (report.errors.length > 0 || report.cleanup.error !== null || report.cleanup.leftover.length > 0)
      code = 1;
  } catch (err) {
    console.error(`bench: elasticsearch crashed: ${describeError(err)}`);
    code = 1;
  }
  clearTimeout(watchdog);
  await cleanupAll();
  process.exit(code);
}

const search: SearchSizeResult[] = [];
let ai: AiBenchResult | null = null;
let aiAnswers: AiAnswersResult | null = null;
let pdf: PdfBenchResult | null = null;
let ocr: OcrBenchResult | null = null;
let media: MediaBenchResult | null = null;
let documents: DocumentsBenchResult | null = null;
let quality: QualityBenchResult | null = null;
let documentsQuality: DocumentsQualityResult | null = null;
const split = emptySplitResult();
const runs = (name: Benchmark) => onlyNames === undefined || onlyNames.includes(name);
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
if (runs("ai")) {
  await attempt("ai search", async () => {
    ai = await benchAiSearch(DEFAULT_AI_OPTIONS, log);
  });
  await attempt("ai answers", async () => {
    aiAnswers = await benchAiAnswers(DEFAULT_AI_ANSWERS_OPTIONS, log);
  });
}
if (runs("pdf")) {
  await attempt("PDF ingestion", async () => {
    pdf = await benchPdfIngestion(DEFAULT_PDF_OPTIONS, log);
  });
}
if (runs("ocr")) {
  await attempt("OCR", async () => {
    ocr = await benchOcr(DEFAULT_OCR_OPTIONS, log);
  });
}
if (runs("media")) {
  await attempt("media", async () => {
    media = await benchMedia(DEFAULT_MEDIA_OPTIONS, log);
  });
}
if (runs("documents")) {
  await attempt("office documents", async () => {
    documents = await benchDocuments(DEFAULT_DOCUMENTS_OPTIONS, log);
  });
}
if (runs("quality")) {
  await attempt("retrieval quality", async () => {
    quality = await benchQuality(DEFAULT_QUALITY_OPTIONS, log);
  });
}
if (runs("documents-quality")) {
  await attempt("documents retrieval quality", async () => {
    documentsQuality = await benchDocumentsQuality(DEFAULT_DOCUMENTS_QUALITY_OPTIONS, log);
  });
}
if (runs("split")) {
  await attempt("split-mode ingestion", async () => {
    split.ingestion = await benchSplitIngestion(DEFAULT_SPLIT_OPTIONS.ingestion, log);
  });
  await attempt("split-mode search", () =>
    benchSplitSearch(searchOptions, DEFAULT_SPLIT_OPTIONS.search, split, log),
  );
  await attempt("ranking parity", async () => {
    split.parity = await benchParity(log);
  });
  await attempt("split-mode ai search", async () => {
    split.ai = await benchSplitAi(
      searchOptions.sizes.filter((size) => size === Math.max(...searchOptions.sizes)),
      log,
    );
  });
  compareWithAllInOne(split, search);
}
clearTimeout(watchdog);
await cleanupAll();

const measured: Report = {
  date: new Date().toISOString(),
  durationSeconds: Math.round((performance.now() - started) / 1000),
  machine: machine(loadAtStart),
  options: {
    search: runs("search") || runs("split") ? searchOptions : null,
    ai: runs("ai") ? DEFAULT_AI_OPTIONS : null,
    aiAnswers: runs("ai") ? DEFAULT_AI_ANSWERS_OPTIONS : null,
    pdf: runs("pdf") ? DEFAULT_PDF_OPTIONS : null,
    ocr: runs("ocr") ? DEFAULT_OCR_OPTIONS : null,
    media: runs("media") ? DEFAULT_MEDIA_OPTIONS : null,
    split: runs("split") ? DEFAULT_SPLIT_OPTIONS : null,
    quality: runs("quality") ? DEFAULT_QUALITY_OPTIONS : null,
    documents: runs("documents") ? DEFAULT_DOCUMENTS_OPTIONS : null,
    documentsQuality: runs("documents-quality") ? DEFAULT_DOCUMENTS_QUALITY_OPTIONS : null,
  },
  targets: evaluateTargets(search, pdf, ocr, media, ai, aiAnswers, runs("split") ? split : null),
  search,
  ai,
  aiAnswers,
  pdf,
  ocr,
  media,
  split: runs("split") ? split : null,
  quality,
  documents,
  documentsQuality,
  errors,
};
const ran = BENCHMARKS.filter((name) => runs(name)).map(sectionOf);
// Every section records when and at which commit it was measured; a partial run keeps the others
// from the last report, marked as such, and judges targets only on figures measured now.
const report = only === undefined ? withOrigins(measured, ran, null) : carryOver(measured, ran);
report.targets = reportTargets(report);
const written = writeReport(report);

console.log("\nLocus benchmark summary");
for (const s of search) {
  const l = s.overall.latencyMs;
  console.log(
    `  quick search, ${s.passages} passages: p50 ${l.p50} ms, p95 ${l.p95} ms, p99 ${l.p99} ms, mean ${l.mean} ms (${s.measuredQueries} queries)`,
  );
}
const aiResult = ai as AiBenchResult | null;
if (aiResult) {
  const w = aiResult.wordVectors;
  console.log(
    `  word vectors: load ${w.medianLoadMs} ms, process RSS ${w.medianRssMb} MB (${w.baselineRssMb} MB before)`,
  );
  for (const s of aiResult.sizes) {
    console.log(
      `  ai search, ${s.passages} real-text passages: p50 ${s.latencyMs.p50} ms, p95 ${s.latencyMs.p95} ms; hit@5 test: ai ${s.hitAt5.test.ai}/${s.hitAt5.test.questions}, quick ${s.hitAt5.test.quick}/${s.hitAt5.test.questions}; dev: ai ${s.hitAt5.dev.ai}/${s.hitAt5.dev.questions}, quick ${s.hitAt5.dev.quick}/${s.hitAt5.dev.questions}`,
    );
  }
}
const aiAnswersResult = aiAnswers as AiAnswersResult | null;
if (aiAnswersResult) {
  for (const s of aiAnswersResult.sets.filter((x) => x.questions > 0))
    console.log(
      `  ai answers (real manuals), ${s.set}: answer ${s.answer.n}/${s.answer.of}, whole ${s.whole.n}/${s.whole.of}, ` +
        `citation precision ${s.citationPrecision.n}/${s.citationPrecision.of}, false answered ${s.falseAnswered.n}/${s.falseAnswered.of}, ` +
        `retrieval hit@5 ${s.retrievalHitAt5.n}/${s.retrievalHitAt5.of}`,
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
  const manuals = pdfResult.realManuals;
  if (manuals) {
    for (const [engine, ratio] of Object.entries(manuals.total.ratio) as [PdfEngine, number][]) {
      console.log(
        `  real manuals (${manuals.total.pages} pages), ${engine}: ${manuals.total.pagesPerSecond[engine]} pages/s, ${ratio}× pdftotext (${manuals.total.pdftotextPagesPerSecond} pages/s)`,
      );
    }
  }
}
const ocrResult = ocr as OcrBenchResult | null;
if (ocrResult) {
  const t = ocrResult.throughput;
  console.log(
    `  OCR, 150-dpi scans of ${t.linesPerPage} lines, ${t.workers} recognisers: ${t.medianPagesPerSecond} pages/s (median of ${t.rounds.length} rounds of ${t.pages} pages)`,
  );
  for (const a of ocrResult.accuracy)
    console.log(
      `  OCR word accuracy, ${a.engine ?? "wasm"}, ${a.variant}: ${(a.accuracy * 100).toFixed(1)}% (${a.correct}/${a.words})`,
    );
  const real = ocrResult.realImages;
  for (const e of real?.engines ?? []) {
    const words = e.words ? `, words right ${e.words.inOrder}/${e.words.words}` : "";
    const ratio = e.ratio
      ? `; tesseract ÷ Locus ${e.ratio.plain}× (as installed), ${e.ratio.oneThread}× (OMP_THREAD_LIMIT=1)`
      : "";
    console.log(
      `  OCR real page images (${real?.images.length} at once), ${e.engine}: ready in ${e.medianMs} ms${words}${ratio}`,
    );
  }
  if (real?.tesseract) {
    const t = real.tesseract;
    const words = t.words ? `, words right ${t.words.inOrder}/${t.words.words}` : "";
    console.log(
      `  tesseract ${t.version}, ${real.cores} at once: ${t.medianPlainMs} ms as installed, ${t.medianOneThreadMs} ms with OMP_THREAD_LIMIT=1${words}`,
    );
  }
  console.log(
    `  scanned PDF of ${ocrResult.scannedPdf.pages} pages through the server: ${ocrResult.scannedPdf.pagesPerSecond} pages/s`,
  );
}
const mediaResult = media as MediaBenchResult | null;
if (mediaResult) {
  for (const e of mediaResult.speech.engines)
    console.log(
      `  speech, ${e.engine}: real-time factor ${e.medianRtf} (median of ${e.rounds.length}, ${mediaResult.speech.audioS} s of speech)`,
    );
  for (const w of mediaResult.wer)
    console.log(
      `  word error rate, ${w.engine}, ${w.recording}: ${(w.wer * 100).toFixed(1)}% (${w.errors}/${w.words})`,
    );
  console.log(
    `  ${Math.round(mediaResult.longRecording.audioS / 60)}-minute recording through the server: ready in ${(mediaResult.longRecording.serverReadyMs / 1000).toFixed(1)} s`,
  );
  console.log(
    `  video: ${mediaResult.video.framesRead} frames read by OCR in ${mediaResult.video.seconds} s of video, ${mediaResult.video.framesPerSecond} frames/s`,
  );
}
const documentsResult = documents as DocumentsBenchResult | null;
if (documentsResult) {
  for (const k of documentsResult.kinds)
    console.log(
      `  office documents to PDF (real), ${k.kind}, ${k.pages} pages: Locus ${k.pagesPerSecond.locus} pages/s, ` +
        `soffice ${k.pagesPerSecond.soffice} pages/s (${k.speedRatio}×); peak ${k.peakRssMb.locus} MB, soffice ${k.peakRssMb.soffice} MB (${k.memoryRatio}×)`,
    );
}
const qualityResult = quality as QualityBenchResult | null;
if (qualityResult) {
  for (const r of qualityResult.rows)
    console.log(
      `  retrieval quality (real material), ${r.kind} ${r.category}, ${r.mode}: hit@1 ${r.hitAt1}/${r.queries}, hit@5 ${r.hitAt5}/${r.queries}, MRR ${r.mrr}`,
    );
}
const documentsQualityResult = documentsQuality as DocumentsQualityResult | null;
if (documentsQualityResult) {
  for (const r of documentsQualityResult.rows)
    console.log(
      `  documents retrieval quality (real material), ${r.group}, ${r.mode}: hit@1 ${r.hitAt1}/${r.queries}, hit@5 ${r.hitAt5}/${r.queries}, MRR ${r.mrr}`,
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
for (const a of split.ai ?? [])
  console.log(
    `  split ai search via the gateway, ${a.passages} passages: p50 ${a.latencyMs.p50} ms, p95 ${a.latencyMs.p95} ms`,
  );
for (const k of split.searchSkipped)
  console.log(`  split quick search, ${k.passages} passages: skipped (${k.reason})`);
for (const line of targetSummaryLines(report.targets)) console.log(line);
for (const e of errors) console.log(`  CRASHED ${e.benchmark}: ${e.error.split("\n")[0]}`);
console.log(`Report: ${written.md}\n        ${written.json}`);
process.exitCode = errors.length > 0 ? 1 : 0;
