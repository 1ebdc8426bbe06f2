/**
 * `pnpm bench --only elasticsearch`: sizing figures for an Elasticsearch cluster. Loads N passages
 * of real text (bench/corpus/real-text.ts; tenants share the pool's texts when N is larger, see
 * elasticsearch-corpus.ts), each with its vector from the offline sentence encoder (encoded once
 * and cached), for M tenants (Zipf-sized: a few large, many small) through the real
 * ElasticsearchSearchIndex, in files of 50 passages, C files at a time, so the figures include
 * Locus's bulk batching, routing by user and wait-for-refresh per file; then times sequential quick
 * searches and ai mode's kNN searches (with their recall against the exact nearest) through the
 * adapter for a small, a medium and the largest tenant; reads the index's size and document count
 * and the nodes' heap from the cluster; and writes bench/report/elasticsearch-<date>.md and .json
 * with sizing notes derived from what it measured.
 *
 * It only ever touches its own index: a random prefix `locus-bench-<hex>` (the adapter's alias and
 * its `<prefix>-v<N>` index), deleted by name at the end, on errors, on Ctrl-C and at the global
 * time limit. `--dry-run` runs the same flow on an in-process fake cluster (elasticsearch-fake.ts).
 *
 * This file is the run; beside it: elasticsearch-types.ts (options, constants, the report's shape),
 * -tenants.ts (tenant sizes, the files' order and seeds), -cluster.ts (connection, cluster and index
 * facts, errors), -search.ts (the timed searches) and -report.ts (sizing notes, Markdown, JSON, summary).
 */
import { randomBytes, randomUUID } from "node:crypto";
import { assertRunning, defer, track } from "../harness/cleanup.ts";
import {
  ElasticsearchSearchIndex,
  EsClient,
  PARAPHRASES,
  PARAPHRASES_DEV,
  SentenceEncoder,
} from "../harness/deps.ts";
import { esCorpus, poolVectors, tenantFile, type EsCorpus } from "./elasticsearch-corpus.ts";
import {
  adminClientOptions,
  clusterFacts,
  connectionSettings,
  describeError,
  endpointLabel,
  heapFacts,
  indexFacts,
  isUnavailable,
  ownIndexes,
  seconds,
  sleep,
} from "./elasticsearch-cluster.ts";
import { fakeCluster, fakeConnection } from "./elasticsearch-fake.ts";
import { sizingNotes } from "./elasticsearch-report.ts";
import { measureKnn, measureTenant, mergeOverall } from "./elasticsearch-search.ts";
import { fileSchedule, measuredTenants, tenantSizes, type Tenant } from "./elasticsearch-tenants.ts";
import {
  ADAPTER_BULK_BATCH,
  DRY_RUN_NODE,
  FILE_ATTEMPTS,
  KNN_LIMIT,
  LIMIT,
  PASSAGES_PER_FILE,
  TENANT_ZIPF_EXPONENT,
  WARMUP_PER_TENANT,
  type EsBenchOptions,
  type EsReport,
} from "./elasticsearch-types.ts";
import { machine } from "../harness/machine.ts";
import { describeRealText } from "../corpus/real-text.ts";
import { asAsync } from "../search/search-latency.ts";
import { round, roundSummary, summarise } from "../harness/stats.ts";

// Everything this file exported before it was split: bench/run.ts imports from here.
export { describeError } from "./elasticsearch-cluster.ts";
export { esSummary, renderEsMarkdown, sizingNotes, writeEsReport } from "./elasticsearch-report.ts";
export { measuredTenants, tenantSizes } from "./elasticsearch-tenants.ts";
export {
  DEFAULT_ES_OPTIONS,
  type EsBenchOptions,
  type EsReport,
  type TenantSearchResult,
} from "./elasticsearch-types.ts";

// ---------------------------------------------------------------------------------------------
// The run

/**
 * Runs the benchmark and returns the report (also when a step failed after the load, with
 * `errors`); throws when it could not get as far as loading. The index is deleted either way.
 */
export async function benchElasticsearch(
  options: EsBenchOptions,
  log: (line: string) => void,
  loadAtStart: number,
): Promise<EsReport> {
  const started = performance.now();
  // The encoder first: the index's vector field takes its dimensions.
  const encoder = options.vectors ? await SentenceEncoder.load() : null;
  const prefix = `locus-bench-${options.dryRun ? "dry-run-" : ""}${randomBytes(6).toString("hex")}`;

  let admin: EsClient;
  let index: ElasticsearchSearchIndex;
  let requests: Map<string, number> | null = null;
  const indexOptions = {
    indexPrefix: prefix,
    ...(encoder?.dimensions ? { localVectorDims: encoder.dimensions } : {}),
    ...(options.shards !== null ? { shards: options.shards } : {}),
    ...(options.replicas !== null ? { replicas: options.replicas } : {}),
  };
  if (options.dryRun) {
    const cluster = fakeCluster();
    requests = cluster.requests;
    const Connection = fakeConnection(cluster);
    admin = new EsClient({ node: DRY_RUN_NODE, Connection });
    index = new ElasticsearchSearchIndex({
      ...indexOptions,
      client: new EsClient({ node: DRY_RUN_NODE, Connection }),
    });
  } else {
    const settings = connectionSettings(options);
    admin = new EsClient(adminClientOptions(settings));
    index = new ElasticsearchSearchIndex({ ...settings, ...indexOptions });
  }

  const report: EsReport = {
    dryRun: options.dryRun,
    date: new Date().toISOString(),
    durationSeconds: 0,
    machine: machine(loadAtStart),
    options: {
      ...options,
      url: options.url === null ? null : endpointLabel(options),
      cloudId: options.cloudId === null ? null : "(set)",
      passagesPerFile: PASSAGES_PER_FILE,
      tenantZipfExponent: TENANT_ZIPF_EXPONENT,
      warmupQueriesPerTenant: Math.min(WARMUP_PER_TENANT, options.queries),
      limit: LIMIT,
      knnLimit: KNN_LIMIT,
      adapterBulkBatch: ADAPTER_BULK_BATCH,
    },
    cluster: {
      endpoint: endpointLabel(options),
      name: "?",
      version: "?",
      buildFlavor: "?",
      luceneVersion: "?",
      health: "?",
      nodes: 0,
      dataNodes: 0,
      nodeList: null,
    },
    index: null,
    dataset: {
      tenants: options.tenants,
      passages: options.passages,
      files: 0,
      tenantPassages: { largest: 0, median: 0, smallest: 0 },
      sourceBytesPerPassage: 0,
      text: describeRealText(),
      distinctPassages: 0,
      vectors: null,
    },
    load: null,
    search: { tenants: [], overall: null },
    knn: null,
    heap: null,
    sizing: [],
    cleanup: { deleted: [], leftover: [], error: null },
    errors: [],
    dryRunRequests: null,
  };

  /** Set just before the first write (which creates the index): before it there is nothing to delete. */
  let writing = false;
  // Registered before anything is created: whatever happens next, the run's indexes go.
  const cleanup = defer(async () => {
    // Closed first, so nothing in flight can re-create the index after it is deleted.
    await index.close().catch(() => undefined);
    if (!writing) {
      await admin.close().catch(() => undefined);
      return;
    }
    try {
      const names = await ownIndexes(admin, prefix);
      if (names.length > 0) await admin.indices.delete({ index: names });
      report.cleanup.deleted = names;
      report.cleanup.leftover = await ownIndexes(admin, prefix);
      log(
        `elasticsearch: deleted ${names.length > 0 ? names.join(", ") : "nothing (no index was created)"}` +
          (report.cleanup.leftover.length > 0 ? `; STILL THERE: ${report.cleanup.leftover.join(", ")}` : ""),
      );
    } catch (err) {
      report.cleanup.error = describeError(err);
      console.error(
        `elasticsearch: could not delete ${prefix}* (delete it by hand): ${report.cleanup.error}`,
      );
    } finally {
      await admin.close().catch(() => undefined);
    }
  });

  try {
    assertRunning();
    report.cluster = await clusterFacts(admin, options);
    log(
      `elasticsearch: ${report.cluster.endpoint}: ${report.cluster.name}, version ${report.cluster.version}, ` +
        `${report.cluster.nodes} nodes (${report.cluster.dataNodes} data), ${report.cluster.health}; index prefix ${prefix}`,
    );
    const existing = await ownIndexes(admin, prefix);
    if (existing.length > 0) throw new Error(`refusing to run: ${existing.join(", ")} already exist`);

    // Tenants, their passages and their files.
    const sizes = tenantSizes(options.passages, options.tenants);
    const measured = measuredTenants(sizes);
    const tenants: Tenant[] = sizes.map((passages, i) => ({
      index: i,
      rank: i + 1,
      userId: randomUUID(),
      passages,
      fileIds: measured.some((m) => m.rank === i + 1) ? new Set() : null,
    }));
    const corpus: EsCorpus = { ...esCorpus(sizes, log), vectors: null };
    report.dataset.distinctPassages = corpus.pool.length;
    if (encoder) {
      const { encodedNow, encodeSeconds, ...vectors } = await poolVectors(corpus.pool, encoder, log);
      corpus.vectors = vectors;
      report.dataset.vectors = {
        model: encoder.name,
        space: vectors.space,
        dims: vectors.dims,
        encodedNow,
        encodeSeconds,
      };
    }
    const schedule = fileSchedule(sizes, 4242);
    report.dataset.files = schedule.length;
    report.dataset.tenantPassages = {
      largest: sizes[0]!,
      median: sizes[Math.floor((sizes.length - 1) / 2)]!,
      smallest: sizes.at(-1)!,
    };
    log(
      `elasticsearch: loading ${options.passages.toLocaleString("en")} passages for ${options.tenants} tenants ` +
        `(largest ${sizes[0]!.toLocaleString("en")}, smallest ${sizes.at(-1)!.toLocaleString("en")}) in ` +
        `${schedule.length.toLocaleString("en")} files, ${options.concurrency} at a time`,
    );

    // Load.
    writing = true;
    const fileMs: number[] = [];
    let generationMs = 0; // making each file's passages from the pool, between writes
    let sourceBytes = 0;
    let loaded = 0;
    let retriedFiles = 0;
    const cpuStart = process.cpuUsage();
    const loadStart = performance.now();
    let lastLog = loadStart;
    const writeFile = async (tenant: Tenant, fileId: string, passages: ReturnType<typeof tenantFile>) => {
      const t0 = performance.now();
      for (let attempt = 1; ; attempt++) {
        try {
          await index.replaceFilePassages({ userId: tenant.userId, fileId }, asAsync(passages));
          break;
        } catch (err) {
          if (!isUnavailable(err) || attempt >= FILE_ATTEMPTS) throw err;
          if (attempt === 1) retriedFiles += 1;
          await sleep(1000 * attempt);
          assertRunning();
        }
      }
      fileMs.push(performance.now() - t0);
      loaded += passages.length;
      const now = performance.now();
      if (now - lastLog > 30_000) {
        lastLog = now;
        const rate = loaded / ((now - loadStart) / 1000);
        log(
          `elasticsearch: ${loaded.toLocaleString("en")}/${options.passages.toLocaleString("en")} passages, ` +
            `${Math.round(rate)}/s, about ${seconds(((options.passages - loaded) / rate) * 1000)} to go`,
        );
      }
    };
    await track(
      (async () => {
        const inFlight = new Set<Promise<void>>();
        let failure: { error: unknown } | null = null;
        for (const { tenant: t, file } of schedule) {
          if (failure) break;
          try {
            assertRunning(); // stop at the next file when the run is interrupted
          } catch (error) {
            failure = { error };
            break;
          }
          const tenant = tenants[t]!;
          const count = Math.min(PASSAGES_PER_FILE, tenant.passages - file * PASSAGES_PER_FILE);
          const g0 = performance.now();
          const passages = tenantFile(corpus, t, file, count);
          for (const p of passages) sourceBytes += Buffer.byteLength(p.content);
          generationMs += performance.now() - g0;
          const fileId = randomUUID();
          tenant.fileIds?.add(fileId);
          const write = writeFile(tenant, fileId, passages).catch((error: unknown) => {
            failure ??= { error };
          });
          inFlight.add(write);
          void write.finally(() => inFlight.delete(write));
          if (inFlight.size >= options.concurrency) await Promise.race(inFlight);
        }
        await Promise.all(inFlight);
        if (failure) throw failure.error;
      })(),
    );
    const loadMs = performance.now() - loadStart;
    const cpu = process.cpuUsage(cpuStart);
    report.dataset.sourceBytesPerPassage = Math.round(sourceBytes / options.passages);
    report.load = {
      seconds: round(loadMs / 1000),
      passagesPerSecond: Math.round(options.passages / (loadMs / 1000)),
      filesPerSecond: round(schedule.length / (loadMs / 1000)),
      perFileMs: roundSummary(summarise(fileMs)),
      retriedFiles,
      generationSeconds: round(generationMs / 1000),
      clientCpuCores: round((cpu.user + cpu.system) / 1000 / loadMs),
    };
    log(
      `elasticsearch: loaded in ${seconds(loadMs)}: ${report.load.passagesPerSecond} passages/s, ` +
        `per file p50 ${report.load.perFileMs.p50} ms, p95 ${report.load.perFileMs.p95} ms`,
    );

    // Search, then the index's own figures (read last: merges have had the search phase to run).
    try {
      for (const m of measured) {
        const tenant = tenants[m.rank - 1]!;
        report.search.tenants.push(await measureTenant(index, corpus, tenant, m.label, options.queries, log));
      }
      const all = report.search.tenants;
      if (all.length > 0) report.search.overall = mergeOverall(all);
    } catch (err) {
      report.errors.push(`search: ${describeError(err)}`);
      console.error(`elasticsearch: search phase failed: ${describeError(err)}`);
    }
    if (encoder) {
      try {
        // Real questions, as ai mode reads them: the paraphrase benchmark's, test and dev.
        const questions = await encoder.embed(
          [...PARAPHRASES, ...PARAPHRASES_DEV].map((p) => p.question),
          undefined,
          "questions",
        );
        const knn: NonNullable<EsReport["knn"]> = { tenants: [], overall: null };
        report.knn = knn;
        for (const m of measured) {
          const tenant = tenants[m.rank - 1]!;
          knn.tenants.push(await measureKnn(index, corpus, questions, tenant, m.label, options.queries, log));
        }
        if (knn.tenants.length > 0) knn.overall = mergeOverall(knn.tenants);
      } catch (err) {
        report.errors.push(`kNN search: ${describeError(err)}`);
        console.error(`elasticsearch: kNN phase failed: ${describeError(err)}`);
      }
    }
    try {
      report.heap = await heapFacts(admin);
    } catch (err) {
      report.errors.push(`heap: ${describeError(err)}`);
    }
    try {
      assertRunning();
      report.index = await indexFacts(admin, prefix, await ownIndexes(admin, prefix), options.passages);
    } catch (err) {
      report.errors.push(`index stats: ${describeError(err)}`);
      console.error(`elasticsearch: reading index stats failed: ${describeError(err)}`);
    }
  } finally {
    await cleanup();
  }
  if (requests)
    report.dryRunRequests = Object.fromEntries([...requests].sort((a, b) => a[0].localeCompare(b[0])));
  report.sizing = sizingNotes(report);
  report.durationSeconds = Math.round((performance.now() - started) / 1000);
  return report;
}
