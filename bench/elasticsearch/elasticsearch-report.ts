// The Elasticsearch benchmark's sizing notes, and its report: Markdown, JSON files, the console summary.
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { seconds } from "./elasticsearch-cluster.ts";
import {
  KNN_LIMIT,
  LIMIT,
  PASSAGES_PER_FILE,
  RECALL_AT,
  RECALL_QUERIES,
  type ClassFigures,
  type EsReport,
} from "./elasticsearch-types.ts";
import { REPORT_DIR } from "../harness/paths.ts";
import { fmt, table } from "../harness/report-format.ts";
import { QUERY_CLASS_DESCRIPTIONS, QUERY_CLASSES, type QueryClass } from "../search/search-latency.ts";
import { round } from "../harness/stats.ts";

// ---------------------------------------------------------------------------------------------
// Sizing notes and the report

const gb = (bytes: number) => round(bytes / 1e9);
const size = (bytes: number) => (bytes >= 1e9 ? `${gb(bytes)} GB` : `${round(bytes / 1e6)} MB`);

/** The classes as realTextQueries draws them from each tenant's own passages. */
const CLASS_DESCRIPTIONS: Record<QueryClass, string> = {
  ...QUERY_CLASS_DESCRIPTIONS,
  rare: "1 word of the least frequent 30% of the tenant's words (seen at least twice)",
  phrase: "three consecutive words of one of the tenant's passages",
};

/** "How to read this for sizing", from the measured figures only. */
export function sizingNotes(r: EsReport): string[] {
  const notes: string[] = [];
  if (r.dryRun)
    notes.push(
      "DRY RUN: these figures come from an in-process fake cluster; they check the benchmark, and say nothing about Elasticsearch.",
    );
  const ix = r.index;
  const replicas = ix?.replicas ?? 1;
  if (ix && ix.docs > 0) {
    const perMillion = (ix.primaryBytesPerPassage * 1e6 * (1 + replicas)) / 1e9;
    notes.push(
      `Disk: ${ix.primaryBytesPerPassage} bytes per passage on disk for the primaries ` +
        `(${round(ix.primaryBytesPerPassage / Math.max(1, r.dataset.sourceBytesPerPassage))}× the ${r.dataset.sourceBytesPerPassage} bytes of its text), ` +
        `read right after loading, before merges settle. With ${replicas} replica(s) plan about ${round(perMillion)} GB per million passages, ` +
        `${round(perMillion * 10)} GB per 10 million; keep data nodes below the 85% disk watermark (so about ${round(perMillion / 0.85)} GB of disk per million passages) ` +
        `and leave room for merges and for \`pnpm locus index rebuild\`, which holds a second copy of the index while it runs.` +
        (ix.docsMatchPassages
          ? ""
          : ` (The index held ${ix.docs} documents for ${r.dataset.passages} passages: check the run.)`),
    );
  }
  const load = r.load;
  if (load) {
    const holders = ix && ix.nodesHoldingShards > 0 ? ix.nodesHoldingShards : r.cluster.dataNodes;
    const perNode = holders > 0 ? Math.round(load.passagesPerSecond / holders) : null;
    const timeFor = (n: number) => seconds((n / load.passagesPerSecond) * 1000);
    notes.push(
      `Indexing: ${load.passagesPerSecond} passages/s with ${r.options.concurrency} files of ${PASSAGES_PER_FILE} passages in flight` +
        (perNode !== null
          ? ` (${perNode} passages/s per data node, over the ${holders} node(s) holding the index's ${ix?.primaryShards ?? "?"} primary shard(s) and their replicas)`
          : "") +
        `. Each file took p50 ${load.perFileMs.p50} ms, p95 ${load.perFileMs.p95} ms: a delete-by-query and one bulk request that waits for a refresh (refresh interval ${ix?.refreshInterval ?? "?"}), ` +
        `so the rate is about files in flight × ${PASSAGES_PER_FILE} / time per file. Locus's indexer writes one file at a time per process: ` +
        `the rate grows with the number of indexer processes until the time per file starts to grow — rerun with a larger --concurrency to find that point. ` +
        `At this rate 1 million passages load in ${timeFor(1e6)}, 10 million in ${timeFor(1e7)}.` +
        (load.retriedFiles > 0
          ? ` ${load.retriedFiles} file(s) were retried after 503s or timeouts: the cluster was at its limit.`
          : "") +
        (load.clientCpuCores > 0.8
          ? ` The benchmark process used ${load.clientCpuCores} cores while loading: the client may have been the limit; run it on a larger machine or nearer the cluster.`
          : ""),
    );
  }
  const searched = r.search.tenants;
  if (searched.length > 0) {
    notes.push(
      `Search: sequential quick searches (limit ${LIMIT}, one client) had p95 ` +
        searched
          .map(
            (t) =>
              `${t.overall.latencyMs.p95} ms for a tenant of ${t.passages.toLocaleString("en")} passages`,
          )
          .join(", ") +
        (r.search.overall ? ` (p95 ${r.search.overall.latencyMs.p95} ms overall)` : "") +
        `. Every search is routed to the one shard holding its tenant and filtered to that tenant, so latency follows the tenant's size and that shard's, ` +
        `not the cluster's total: size for the largest tenant you expect, and add nodes (with more primary shards) to spread tenants, not to speed up one. ` +
        `These are single-client latencies; throughput under concurrent searches is not measured here.`,
    );
  }
  const knn = r.knn?.tenants ?? [];
  if (knn.length > 0 && r.dataset.vectors) {
    const v = r.dataset.vectors;
    notes.push(
      `ai mode's vector half: sequential kNN searches of ${KNN_LIMIT} neighbours (the ${v.dims}-dimension vectors of ${v.model}, ` +
        `rescored with the float vectors) had p95 ` +
        knn
          .map(
            (t) =>
              `${t.figures.latencyMs.p95} ms for a tenant of ${t.passages.toLocaleString("en")} passages (recall@${RECALL_AT} ${t.recall})`,
          )
          .join(", ") +
        `. Elasticsearch keeps each vector twice, int8 in the HNSW graph (${v.dims} bytes) and float for rescoring ` +
        `(${v.dims * 4} bytes): the graph should fit in the page cache, so plan about ${round((r.dataset.passages * v.dims * (1 + replicas)) / 1e9)} GB of RAM ` +
        `outside the heap for these ${r.dataset.passages.toLocaleString("en")} passages (${round((v.dims * 1e6 * (1 + replicas)) / 1e9)} GB per million).`,
    );
  }
  if (r.heap && r.heap.length > 0)
    notes.push(
      `Heap after loading and searching: ` +
        r.heap.map((h) => `${h.name} ${size(h.usedBytes)} of ${size(h.maxBytes)}`).join(", ") +
        `. Vectors and postings live outside the heap (memory-mapped files): the heap holds the node's caches and each request's work.`,
    );
  if (r.cluster.dataNodes > 0 && load)
    notes.push(
      `Measured on ${r.cluster.nodes} node(s), ${r.cluster.dataNodes} data node(s), Elasticsearch ${r.cluster.version}, index with ` +
        `${ix?.primaryShards ?? "?"} primary shard(s) and ${ix?.replicas ?? "?"} replica(s), ${r.dataset.passages.toLocaleString("en")} passages; ` +
        `figures at other sizes are extrapolations: rerun at the size you plan for.`,
    );
  return notes;
}

export function renderEsMarkdown(r: EsReport): string {
  const out: string[] = [];
  const m = r.machine;
  out.push(`# Locus Elasticsearch benchmark${r.dryRun ? " — DRY RUN" : ""}`, "");
  if (r.dryRun)
    out.push(
      "> **Dry run**: run against an in-process fake cluster to check the benchmark itself. " +
        "None of the figures below say anything about Elasticsearch.",
      "",
    );
  out.push(`- Date: ${r.date} (took ${r.durationSeconds} s)`);
  out.push(
    `- Cluster: ${r.cluster.endpoint}: \`${r.cluster.name}\`, Elasticsearch ${r.cluster.version} (${r.cluster.buildFlavor}, Lucene ${r.cluster.luceneVersion}), ` +
      `${r.cluster.nodes} node(s), ${r.cluster.dataNodes} data node(s), health ${r.cluster.health}`,
  );
  if (r.index)
    out.push(
      `- Index: ${r.index.primaryShards ?? "?"} primary shard(s), ${r.index.replicas ?? "?"} replica(s), refresh interval ${r.index.refreshInterval}, ` +
        `on ${r.index.nodesHoldingShards || "?"} node(s); deleted afterwards (${r.cleanup.deleted.join(", ") || "nothing to delete"})`,
    );
  out.push(
    `- Client: ${m.nproc} CPUs, ${m.totalMemoryGiB} GiB RAM, ${m.cpuModel}; Node ${m.node}; commit ${m.commit}; ` +
      `load average ${m.loadAverage.start} → ${m.loadAverage.end}`,
  );
  out.push(
    `- Options: ${r.options.passages.toLocaleString("en")} passages, ${r.options.tenants} tenants (Zipf, exponent ${r.options.tenantZipfExponent}), ` +
      `${r.options.passagesPerFile} passages per file, ${r.options.concurrency} files at a time, ${r.options.queries} measured searches per tenant ` +
      `after ${r.options.warmupQueriesPerTenant} warm-up, limit ${r.options.limit}`,
    "",
  );
  if (r.errors.length > 0 || r.cleanup.error || r.cleanup.leftover.length > 0) {
    out.push("## Problems", "");
    for (const e of r.errors) out.push(`- ${e.split("\n")[0]}`);
    if (r.cleanup.error)
      out.push(
        `- Cleanup failed: ${r.cleanup.error}; delete \`${r.index?.alias ?? "locus-bench-*"}*\` by hand`,
      );
    if (r.cleanup.leftover.length > 0) out.push(`- Still on the cluster: ${r.cleanup.leftover.join(", ")}`);
    out.push("");
  }

  out.push("## How to read this for sizing", "");
  for (const n of r.sizing) out.push(`- ${n}`);
  out.push("");

  out.push("## Dataset and loading", "");
  out.push(
    `Real text nobody wrote for Locus (${r.dataset.text}), cut into passages as the extractors cut pages ` +
      `(bench/corpus/real-text.ts): ${r.dataset.distinctPassages.toLocaleString("en")} distinct passages, each tenant a run of them ` +
      `(tenants share texts when there are more passages than that, as users uploading the same public documents do)` +
      (r.dataset.vectors
        ? `, each with its vector from ${r.dataset.vectors.model} (${r.dataset.vectors.dims} dimensions; ` +
          `${r.dataset.vectors.encodedNow.toLocaleString("en")} encoded in this run in ${r.dataset.vectors.encodeSeconds} s, the rest read from bench/.cache/es-vectors)`
        : "") +
      `; written through \`ElasticsearchSearchIndex.replaceFilePassages\` — ids \`<user>:<file>:<ord>\`, routed by user, bulk requests of up to ` +
      `${r.options.adapterBulkBatch} passages (so one per file here), the file's last request waiting for a refresh — with files from all tenants interleaved.`,
    "",
  );
  const d = r.dataset;
  const rows: (string | number)[][] = [
    ["tenants", d.tenants],
    ["passages", d.passages.toLocaleString("en")],
    ["files", d.files.toLocaleString("en")],
    [
      "passages of the largest / median / smallest tenant",
      `${d.tenantPassages.largest.toLocaleString("en")} / ${d.tenantPassages.median.toLocaleString("en")} / ${d.tenantPassages.smallest.toLocaleString("en")}`,
    ],
    ["text per passage", `${d.sourceBytesPerPassage} bytes`],
  ];
  if (r.load) {
    const l = r.load;
    rows.push(
      ["load time", `${l.seconds} s`],
      ["**passages/s**", `**${l.passagesPerSecond}**`],
      ["files/s", l.filesPerSecond],
      [
        "per file (ms): p50 / p95 / p99 / max",
        `${fmt(l.perFileMs.p50)} / ${fmt(l.perFileMs.p95)} / ${fmt(l.perFileMs.p99)} / ${fmt(l.perFileMs.max)}`,
      ],
      ["files retried after 503 or timeout", l.retriedFiles],
      ["making the files' passages (in the benchmark process)", `${l.generationSeconds} s`],
      ["benchmark process CPU while loading", `${l.clientCpuCores} cores`],
    );
  }
  if (r.index) {
    const ix = r.index;
    rows.push(
      [
        "documents in the index",
        `${ix.docs.toLocaleString("en")}${ix.docsMatchPassages ? " (= passages)" : " (≠ passages!)"}`,
      ],
      ["size, primaries", `${size(ix.primaryBytes)} (${ix.primaryBytesPerPassage} bytes per passage)`],
      ["size, with replicas", `${size(ix.totalBytes)} (${ix.totalBytesPerPassage} bytes per passage)`],
    );
  }
  out.push(table(["", "value"], rows), "");

  if (r.search.tenants.length > 0) {
    out.push("## Quick search through the adapter", "");
    out.push(
      "Sequential `ElasticsearchSearchIndex.search({ userId, text, limit })` calls from the benchmark process, after a warm-up, " +
        "timed from the call to its result (request building, the round trip, parsing). Query classes: " +
        QUERY_CLASSES.map((c) => `\`${c}\` ${CLASS_DESCRIPTIONS[c]}`).join("; ") +
        ". The same seeded queries for every tenant.",
      "",
    );
    const head = [
      "tenant",
      "passages",
      "files",
      "queries",
      "p50 ms",
      "p95 ms",
      "p99 ms",
      "mean ms",
      "max ms",
      "mean results",
    ];
    const row = (name: string, passages: string, files: string, c: ClassFigures) => [
      name,
      passages,
      files,
      c.queries,
      fmt(c.latencyMs.p50),
      fmt(c.latencyMs.p95),
      fmt(c.latencyMs.p99),
      fmt(c.latencyMs.mean),
      fmt(c.latencyMs.max),
      c.meanResults,
    ];
    const tenantRows = r.search.tenants.map((t) =>
      row(
        `${t.label} (#${t.rank})`,
        t.passages.toLocaleString("en"),
        t.files.toLocaleString("en"),
        t.overall,
      ),
    );
    if (r.search.overall) tenantRows.push(row("**all**", "", "", r.search.overall));
    out.push(table(head, tenantRows), "");
    for (const t of r.search.tenants) {
      out.push(`### ${t.label} tenant (${t.passages.toLocaleString("en")} passages), by query class`, "");
      out.push(
        table(
          ["class", "n", "p50 ms", "p95 ms", "p99 ms", "mean ms", "max ms", "mean results"],
          QUERY_CLASSES.flatMap((cls) => {
            const c = t.byClass[cls];
            return c
              ? [
                  [
                    cls,
                    c.queries,
                    fmt(c.latencyMs.p50),
                    fmt(c.latencyMs.p95),
                    fmt(c.latencyMs.p99),
                    fmt(c.latencyMs.mean),
                    fmt(c.latencyMs.max),
                    c.meanResults,
                  ],
                ]
              : [];
          }),
        ),
        "",
      );
      out.push(
        `Slowest: ${t.slowest.map((q) => `"${q.q}" (${q.cls}, ${q.results} results) ${q.ms} ms`).join("; ")}. ` +
          `Checks: results from another tenant's files: ${t.checks.tenancyLeaks}; phrase queries whose first result has the three words in order: ` +
          `${t.checks.phraseQueriesFirst}; absent-word queries with no result: ${t.checks.absentQueriesEmpty}.`,
        "",
      );
    }
  }
  if (r.knn && r.knn.tenants.length > 0) {
    out.push("## ai mode's kNN search through the adapter", "");
    out.push(
      `Sequential \`ElasticsearchSearchIndex.vectorSearch({ userId, slot: "local", space, vector, limit: ${KNN_LIMIT} })\` calls ` +
        `(the neighbours ai mode asks for at limit 10), with the vectors of the paraphrase benchmark's 60 real questions in turn, after a warm-up. ` +
        `Recall: for the first ${RECALL_QUERIES} questions, the share of the tenant's exact ${RECALL_AT} nearest passages (cosine over all its vectors, ` +
        `computed in the benchmark) among the first ${RECALL_AT} results; score error: the largest difference between a result's score and its exact cosine.`,
      "",
    );
    const rows = r.knn.tenants.map((t) => [
      `${t.label} (#${t.rank})`,
      t.passages.toLocaleString("en"),
      t.figures.queries,
      fmt(t.figures.latencyMs.p50),
      fmt(t.figures.latencyMs.p95),
      fmt(t.figures.latencyMs.p99),
      fmt(t.figures.latencyMs.max),
      t.figures.meanResults,
      t.recall,
      t.maxScoreError,
      t.tenancyLeaks,
    ]);
    if (r.knn.overall)
      rows.push([
        "**all**",
        "",
        r.knn.overall.queries,
        fmt(r.knn.overall.latencyMs.p50),
        fmt(r.knn.overall.latencyMs.p95),
        fmt(r.knn.overall.latencyMs.p99),
        fmt(r.knn.overall.latencyMs.max),
        r.knn.overall.meanResults,
        "",
        "",
        "",
      ]);
    out.push(
      table(
        [
          "tenant",
          "passages",
          "queries",
          "p50 ms",
          "p95 ms",
          "p99 ms",
          "max ms",
          "mean results",
          `recall@${RECALL_AT}`,
          "max score error",
          "results from another tenant",
        ],
        rows,
      ),
      "",
    );
  }
  if (r.heap) {
    out.push("## Heap", "");
    out.push(
      table(
        ["node", "heap used after the searches", "heap max"],
        r.heap.map((h) => [h.name, size(h.usedBytes), size(h.maxBytes)]),
      ),
      "",
    );
  }
  if (r.dryRunRequests) {
    out.push("## Requests the fake cluster answered (dry run)", "");
    out.push(
      table(
        ["request", "count"],
        Object.entries(r.dryRunRequests).map(([k, n]) => [`\`${k}\``, n]),
      ),
      "",
    );
  }
  if (r.cluster.nodeList) {
    out.push("## Nodes", "");
    out.push(
      table(
        ["node", "roles", "heap max", "RAM max", "CPUs"],
        r.cluster.nodeList.map((n) => [n.name, n.roles, n.heapMax, n.ramMax, n.cpu]),
      ),
      "",
    );
  }
  return out.join("\n");
}

/** Writes bench/report/elasticsearch-<date>.md and .json (`elasticsearch-dry-run-<date>` for a dry run). */
export function writeEsReport(r: EsReport): { md: string; json: string } {
  mkdirSync(REPORT_DIR, { recursive: true });
  const stamp = r.date.replace(/\.\d+Z$/, "Z").replace(/:/g, "");
  const base = join(REPORT_DIR, `elasticsearch-${r.dryRun ? "dry-run-" : ""}${stamp}`);
  const write = (path: string, text: string) => {
    writeFileSync(`${path}.tmp`, text);
    renameSync(`${path}.tmp`, path);
  };
  write(`${base}.md`, renderEsMarkdown(r));
  write(`${base}.json`, `${JSON.stringify(r, null, 2)}\n`);
  return { md: `${base}.md`, json: `${base}.json` };
}

/** The summary printed at the end of a run. */
export function esSummary(r: EsReport): string[] {
  const lines = [`Locus Elasticsearch benchmark${r.dryRun ? " (DRY RUN: fake in-process cluster)" : ""}`];
  lines.push(
    `  cluster: ${r.cluster.endpoint}, Elasticsearch ${r.cluster.version}, ${r.cluster.nodes} node(s), ${r.cluster.dataNodes} data`,
  );
  if (r.load)
    lines.push(
      `  loading: ${r.dataset.passages.toLocaleString("en")} passages, ${r.dataset.tenants} tenants in ${r.load.seconds} s: ` +
        `${r.load.passagesPerSecond} passages/s; per file p50 ${r.load.perFileMs.p50} ms, p95 ${r.load.perFileMs.p95} ms, p99 ${r.load.perFileMs.p99} ms`,
    );
  if (r.index)
    lines.push(
      `  index: ${r.index.docs.toLocaleString("en")} documents, ${size(r.index.primaryBytes)} primaries (${r.index.primaryBytesPerPassage} bytes/passage), ${size(r.index.totalBytes)} with replicas`,
    );
  for (const t of r.search.tenants) {
    const l = t.overall.latencyMs;
    lines.push(
      `  search, ${t.label} tenant (${t.passages.toLocaleString("en")} passages): p50 ${l.p50} ms, p95 ${l.p95} ms, p99 ${l.p99} ms; ` +
        `leaks ${t.checks.tenancyLeaks}, phrases first ${t.checks.phraseQueriesFirst}, absent ${t.checks.absentQueriesEmpty}`,
    );
  }
  for (const t of r.knn?.tenants ?? []) {
    const l = t.figures.latencyMs;
    lines.push(
      `  kNN, ${t.label} tenant (${t.passages.toLocaleString("en")} passages): p50 ${l.p50} ms, p95 ${l.p95} ms, p99 ${l.p99} ms; ` +
        `recall@${RECALL_AT} ${t.recall}, score error ${t.maxScoreError}, leaks ${t.tenancyLeaks}`,
    );
  }
  for (const h of r.heap ?? []) lines.push(`  heap, ${h.name}: ${size(h.usedBytes)} of ${size(h.maxBytes)}`);
  if (r.search.overall) {
    const l = r.search.overall.latencyMs;
    lines.push(
      `  search, all: p50 ${l.p50} ms, p95 ${l.p95} ms, p99 ${l.p99} ms (${r.search.overall.queries} queries)`,
    );
  }
  lines.push(
    `  cleanup: deleted ${r.cleanup.deleted.join(", ") || "nothing"}` +
      (r.cleanup.leftover.length > 0 || r.cleanup.error
        ? `; PROBLEM: ${r.cleanup.error ?? r.cleanup.leftover.join(", ")}`
        : "; nothing left"),
  );
  for (const e of r.errors) lines.push(`  ERROR ${e.split("\n")[0]}`);
  return lines;
}
