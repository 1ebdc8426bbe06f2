// The bench report's split mode section: ingestion, quick and ai search through the gateway, ranking parity.
import type { AiBenchResult } from "../ai/ai-search.ts";
import { REST_OF_MACHINE } from "../harness/cpu.ts";
import type { EngineParity, ParityResult } from "./parity.ts";
import { fmt, round2, table } from "../harness/report-format.ts";
import { classRow } from "../search/report-render-search.ts";
import type { SplitAiResult } from "./split-ai.ts";
import { IDLE_STACKS, type SplitBenchResult } from "./split.ts";
import { QUERY_CLASSES, type SearchSizeResult } from "../search/search-latency.ts";

const cpuLabel = (name: string) => (name === "benchmark" ? "benchmark (client + in-test S3 server)" : name);

export function renderSplit(
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
    "The all-in-one ai benchmark's real-text passages with their local vectors, questions and sequence (bench/split/split-ai.ts), " +
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
  const out = [
    "### Ranking parity: the embedded index, PostgreSQL and Elasticsearch on the same passages",
    "",
  ];
  out.push(
    `The ${p.manuals} real manuals of the quality benchmark (${p.passages} passages, extracted once) written into a ` +
      "SQLite index (the all-in-one shape's), a PostgreSQL one (the split shape's) and, where a node was named " +
      "by ELASTICSEARCH_URL, an Elasticsearch one (the design's shared index), as one user, and " +
      `${p.queries} queries asked of each: the quality benchmark's PDF queries and every hand-written question ` +
      "(bench/split/parity.ts). A result is its manual, page and lines. SQLite and PostgreSQL match by the same terms and " +
      "rank with BM25 on the user's own counts (packages/search-index/src/bm25.ts): a difference between them is " +
      "a bug. Elasticsearch matches the same terms but ranks with its shard's counts and Lucene's idf.",
    "",
  );
  out.push(...renderEngineParity(p, "PostgreSQL", p.queries));
  if (p.elasticsearch)
    out.push(...renderEngineParity(p.elasticsearch, `Elasticsearch ${p.elasticsearch.version}`, p.queries));
  else out.push("Elasticsearch: not run (no ELASTICSEARCH_URL).", "");
  return out;
}

/** One engine's figures against SQLite's. */
function renderEngineParity(p: EngineParity, engine: string, queries: number): string[] {
  const share = (n: number) => `${n}/${queries} (${Math.round((n / queries) * 100)}%)`;
  const out = [`SQLite and ${engine}:`, ""];
  out.push(
    table(
      [
        "same matched passages",
        "same first five, in order",
        "same first result",
        "mean share of the first five in common",
        `p50 ms SQLite / ${engine}`,
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
  if (p.filtered) {
    const f = p.filtered;
    out.push(
      "The same queries filtered to every other manual (`metadata.half=even`, applied inside each index before " +
        "the first five are taken):",
      "",
      table(
        [
          "same matched passages",
          "same first five, in order",
          "queries with a result the filter leaves out",
          `p50 ms SQLite / ${engine}`,
        ],
        [
          [
            share(f.sameMatches),
            share(f.sameTop),
            String(f.leaks),
            `${fmt(f.p50Ms.sqlite)} / ${fmt(f.p50Ms.postgres)}`,
          ],
        ],
      ),
      "",
    );
  }
  if (p.differences.length > 0) {
    out.push(
      `First ${p.differences.length} queries ranked differently (first five, SQLite | ${engine}):`,
      "",
    );
    for (const d of p.differences)
      out.push(`- "${d.query}": ${d.sqlite.join(", ")} | ${d.postgres.join(", ")}`);
    out.push("");
  }
  return out;
}
