// The Elasticsearch benchmark's search measurements: timed quick and kNN searches of one tenant, and their figures.
import { assertRunning } from "../harness/cleanup.ts";
import { poolIndex, vectorAt, type EsCorpus } from "./elasticsearch-corpus.ts";
import type { ElasticsearchSearchIndex } from "../harness/deps.ts";
import { words } from "../harness/deps.ts";
import type { Tenant } from "./elasticsearch-tenants.ts";
import {
  KNN_LIMIT,
  LIMIT,
  RECALL_AT,
  RECALL_QUERIES,
  WARMUP_PER_TENANT,
  type ClassFigures,
  type TenantKnnResult,
  type TenantLabel,
  type TenantSearchResult,
} from "./elasticsearch-types.ts";
import { realTextQueries, type RealPassage } from "../corpus/real-text.ts";
import { QUERY_CLASSES, type QueryClass } from "../search/search-latency.ts";
import { round, roundSummary, summarise } from "../harness/stats.ts";

interface Sample {
  cls: QueryClass;
  q: string;
  ms: number;
  results: number;
}

const figures = (samples: readonly { ms: number; results: number }[]): ClassFigures => ({
  queries: samples.length,
  latencyMs: roundSummary(summarise(samples.map((s) => s.ms))),
  meanResults: round(samples.reduce((n, s) => n + s.results, 0) / Math.max(1, samples.length)),
});

/** Samples kept per tenant, for the overall figures. */
const samplesOf = new WeakMap<object, { ms: number; results: number }[]>();

export function mergeOverall(results: readonly object[]): ClassFigures {
  return figures(results.flatMap((r) => samplesOf.get(r) ?? []));
}

/** The tenant's distinct passages, for drawing its queries (its run of the pool, at most the pool). */
function tenantPassages(corpus: EsCorpus, tenant: Tenant): RealPassage[] {
  const count = Math.min(tenant.passages, corpus.pool.length);
  return Array.from({ length: count }, (_, i) => corpus.pool[poolIndex(corpus, tenant.index, i)]!);
}

export async function measureTenant(
  index: ElasticsearchSearchIndex,
  corpus: EsCorpus,
  tenant: Tenant,
  label: TenantLabel,
  count: number,
  log: (line: string) => void,
): Promise<TenantSearchResult> {
  const own = tenantPassages(corpus, tenant);
  const warmup = realTextQueries(own, Math.min(WARMUP_PER_TENANT, count), 1000 + tenant.rank);
  for (const query of warmup) {
    assertRunning();
    await index.search({ userId: tenant.userId, text: query.q, limit: LIMIT });
  }
  // Drawn the same way (same seed) for every tenant, from the tenant's own passages.
  const queries = realTextQueries(own, count, 7);
  const samples: Sample[] = [];
  let tenancyLeaks = 0;
  let phraseFirst = 0;
  for (const query of queries) {
    assertRunning();
    const t0 = performance.now();
    const hits = await index.search({ userId: tenant.userId, text: query.q, limit: LIMIT });
    const ms = performance.now() - t0;
    samples.push({ cls: query.cls, q: query.q, ms, results: hits.length });
    tenancyLeaks += hits.filter((h) => !tenant.fileIds!.has(h.fileId)).length;
    if (query.cls === "phrase" && hits[0] && words(hits[0].content).join(" ").includes(query.q))
      phraseFirst += 1;
  }
  const byClass: Partial<Record<QueryClass, ClassFigures>> = {};
  for (const cls of QUERY_CLASSES) {
    const of = samples.filter((s) => s.cls === cls);
    if (of.length > 0) byClass[cls] = figures(of);
  }
  const phrase = samples.filter((s) => s.cls === "phrase").length;
  const absent = samples.filter((s) => s.cls === "absent");
  const result: TenantSearchResult = {
    label,
    rank: tenant.rank,
    passages: tenant.passages,
    files: tenant.fileIds!.size,
    warmupQueries: warmup.length,
    overall: figures(samples),
    byClass,
    slowest: [...samples]
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 5)
      .map((s) => ({ cls: s.cls, q: s.q, ms: round(s.ms), results: s.results })),
    checks: {
      tenancyLeaks,
      phraseQueriesFirst: `${phraseFirst}/${phrase}`,
      absentQueriesEmpty: `${absent.filter((s) => s.results === 0).length}/${absent.length}`,
    },
  };
  samplesOf.set(result, samples);
  const l = result.overall.latencyMs;
  log(
    `elasticsearch: quick, ${label} tenant (${tenant.passages.toLocaleString("en")} passages): ${samples.length} searches, ` +
      `p50 ${l.p50} ms, p95 ${l.p95} ms, p99 ${l.p99} ms`,
  );
  return result;
}

/** The exact RECALL_AT nearest of the tenant's passages by cosine (vectors are unit length): pool indexes. */
function exactNearest(corpus: EsCorpus, tenant: Tenant, question: Float32Array): number[] {
  const vectors = corpus.vectors!;
  const best: { at: number; score: number }[] = [];
  // A tenant larger than the pool holds its first texts again after the pool's length.
  for (let i = 0; i < Math.min(tenant.passages, corpus.pool.length); i++) {
    const at = poolIndex(corpus, tenant.index, i);
    const v = vectorAt(vectors, at);
    let dot = 0;
    for (let k = 0; k < v.length; k++) dot += v[k]! * question[k]!;
    if (best.length < RECALL_AT || dot > best[best.length - 1]!.score) {
      best.push({ at, score: dot });
      best.sort((a, b) => b.score - a.score);
      if (best.length > RECALL_AT) best.pop();
    }
  }
  return best.map((b) => b.at);
}

/**
 * ai mode's vector half for one tenant: `vectorSearch` with real questions' vectors (the paraphrase
 * benchmark's 60 questions, in turn), KNN_LIMIT neighbours each, after a warm-up; the first
 * RECALL_QUERIES also compared with the exact nearest passages of the tenant, by their text.
 */
export async function measureKnn(
  index: ElasticsearchSearchIndex,
  corpus: EsCorpus,
  questions: readonly Float32Array[],
  tenant: Tenant,
  label: TenantLabel,
  count: number,
  log: (line: string) => void,
): Promise<TenantKnnResult> {
  const { space } = corpus.vectors!;
  const ask = (vector: Float32Array) =>
    index.vectorSearch({ userId: tenant.userId, slot: "local", space, vector, limit: KNN_LIMIT });
  const warmup = Math.min(WARMUP_PER_TENANT, count);
  for (let i = 0; i < warmup; i++) {
    assertRunning();
    await ask(questions[i % questions.length]!);
  }
  const poolAt = new Map(corpus.pool.map((p, i) => [p.content, i]));
  const samples: { ms: number; results: number }[] = [];
  let tenancyLeaks = 0;
  let found = 0;
  let wanted = 0;
  let maxScoreError = 0;
  for (let i = 0; i < count; i++) {
    assertRunning();
    const question = questions[i % questions.length]!;
    const t0 = performance.now();
    const hits = await ask(question);
    samples.push({ ms: performance.now() - t0, results: hits.length });
    tenancyLeaks += hits.filter((h) => !tenant.fileIds!.has(h.fileId)).length;
    if (i < RECALL_QUERIES) {
      // Compared by text: the same text may sit in several of a tenant's files, but once in the pool.
      const exact = exactNearest(corpus, tenant, question).map((at) => corpus.pool[at]!.content);
      const got = new Set(hits.slice(0, RECALL_AT).map((h) => h.content));
      found += exact.filter((text) => got.has(text)).length;
      wanted += exact.length;
      for (const hit of hits.slice(0, RECALL_AT)) {
        const at = poolAt.get(hit.content);
        if (at === undefined) continue;
        const v = vectorAt(corpus.vectors!, at);
        let dot = 0;
        for (let k = 0; k < v.length; k++) dot += v[k]! * question[k]!;
        // The index scores a cosine as max(0, cosine) (search-index.ts, PassageHit.score).
        maxScoreError = Math.max(maxScoreError, Math.abs(hit.score - Math.max(0, dot)));
      }
    }
  }
  const result: TenantKnnResult = {
    label,
    rank: tenant.rank,
    passages: tenant.passages,
    warmupQueries: warmup,
    figures: figures(samples),
    tenancyLeaks,
    recall: wanted > 0 ? round(found / wanted) : 0,
    maxScoreError: round(maxScoreError),
  };
  samplesOf.set(result, samples);
  const l = result.figures.latencyMs;
  log(
    `elasticsearch: kNN, ${label} tenant (${tenant.passages.toLocaleString("en")} passages): ${count} searches, ` +
      `p50 ${l.p50} ms, p95 ${l.p95} ms; recall@${RECALL_AT} ${result.recall}`,
  );
  return result;
}
