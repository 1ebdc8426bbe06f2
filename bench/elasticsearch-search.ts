// The Elasticsearch benchmark's search measurements: timed quick searches of one tenant, and their figures.
import { assertRunning } from "./cleanup.ts";
import type { Vocabulary } from "./corpus.ts";
import type { ElasticsearchSearchIndex } from "./deps.ts";
import type { Tenant } from "./elasticsearch-tenants.ts";
import {
  LIMIT,
  WARMUP_PER_TENANT,
  type ClassFigures,
  type TenantLabel,
  type TenantSearchResult,
} from "./elasticsearch-types.ts";
import { makeQueries, PLANTS_PER_PHRASE, QUERY_CLASSES, type QueryClass } from "./search-latency.ts";
import { round, roundSummary, summarise } from "./stats.ts";

interface Sample {
  cls: QueryClass;
  q: string;
  ms: number;
  results: number;
}

const figures = (samples: readonly Sample[]): ClassFigures => ({
  queries: samples.length,
  latencyMs: roundSummary(summarise(samples.map((s) => s.ms))),
  meanResults: round(samples.reduce((n, s) => n + s.results, 0) / Math.max(1, samples.length)),
});

/** Samples kept per tenant, for the overall figure. */
const samplesOf = new WeakMap<TenantSearchResult, Sample[]>();

export function mergeOverall(results: readonly TenantSearchResult[]): ClassFigures {
  return figures(results.flatMap((r) => samplesOf.get(r) ?? []));
}

export async function measureTenant(
  index: ElasticsearchSearchIndex,
  vocab: Vocabulary,
  tenant: Tenant,
  label: TenantLabel,
  count: number,
  log: (line: string) => void,
): Promise<TenantSearchResult> {
  const warmup = makeQueries(vocab, Math.min(WARMUP_PER_TENANT, count), 1000 + tenant.rank);
  for (const query of warmup) {
    assertRunning();
    await index.search({ userId: tenant.userId, text: query.q, limit: LIMIT });
  }
  // The same queries for every tenant, so sizes compare like with like.
  const queries = makeQueries(vocab, count, 7);
  const samples: Sample[] = [];
  let tenancyLeaks = 0;
  let phraseExact = 0;
  const expectedPhraseHits = tenant.plants.size > 0 ? PLANTS_PER_PHRASE : 0;
  for (const query of queries) {
    assertRunning();
    const t0 = performance.now();
    const hits = await index.search({ userId: tenant.userId, text: query.q, limit: LIMIT });
    const ms = performance.now() - t0;
    samples.push({ cls: query.cls, q: query.q, ms, results: hits.length });
    tenancyLeaks += hits.filter((h) => !tenant.fileIds!.has(h.fileId)).length;
    if (
      query.cls === "phrase" &&
      hits.length === expectedPhraseHits &&
      (expectedPhraseHits === 0 || hits[0]!.content.replace(/\s+/g, " ").includes(query.q))
    )
      phraseExact += 1;
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
      phraseQueriesExact: `${phraseExact}/${phrase}`,
      absentQueriesEmpty: `${absent.filter((s) => s.results === 0).length}/${absent.length}`,
    },
  };
  samplesOf.set(result, samples);
  const l = result.overall.latencyMs;
  log(
    `elasticsearch: ${label} tenant (${tenant.passages.toLocaleString("en")} passages): ${samples.length} searches, ` +
      `p50 ${l.p50} ms, p95 ${l.p95} ms, p99 ${l.p99} ms`,
  );
  return result;
}
