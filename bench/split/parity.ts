/**
 * Ranking parity: the embedded index (SQLite FTS5), the split shape's (PostgreSQL) and, where a node
 * is named by ELASTICSEARCH_URL, the design's shared index (Elasticsearch) given the same passages
 * of real manuals and the same queries, each compared with SQLite result by result. SQLite and
 * PostgreSQL must find the same passages for a query and rank them alike (one set of terms and the
 * user's own BM25 counts, held by the contract suite); Elasticsearch matches the same terms but
 * ranks with its shard's counts and Lucene's idf (packages/search-index/src/bm25.ts), so this
 * measures how far its ranking moves from the embedded one on real text, and lists the queries
 * where the rankings differ.
 *
 * Run alone: `node --import tsx bench/split/parity.ts` (needs PostgreSQL at DATABASE_URL, default the
 * test database CI starts; Elasticsearch at ELASTICSEARCH_URL, optional); `pnpm bench --only
 * split` runs it with the split benchmarks.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@elastic/elasticsearch";
import type { ExtractedPassage, FileFilter, StoredLocator } from "@locus/contracts";
import { extractPdf } from "@locus/pdf-reader";
import {
  ElasticsearchSearchIndex,
  PostgresSearchIndex,
  SqliteSearchIndex,
  type PassageHit,
  type SearchIndex,
} from "@locus/search-index";
import {
  dropTestSchema,
  PARITY_MANUALS,
  parityQueries,
  QUALITY_FIXTURES,
  TEST_DATABASE_URL,
} from "@locus/testing";

/** Results compared per query: the first five, as the README's hit@5 figures count them. */
const TOP = 5;
/** Queries listed where the two rankings differ. */
const LISTED = 10;

export interface ParityDifference {
  query: string;
  sqlite: string[];
  /** The other engine's first five (PostgreSQL's, or Elasticsearch's under `elasticsearch`). */
  postgres: string[];
}

/** One engine's results against SQLite's for the same queries. */
export interface EngineParity {
  /** Queries whose matched passages (all of them, up to 1,000) are the same set in both. */
  sameMatches: number;
  /** Queries whose first five results are the same passages in the same order. */
  sameTop: number;
  /** Queries whose first result is the same passage. */
  sameFirst: number;
  /** Mean share of the first five that both have (order ignored). */
  meanOverlap: number;
  /** Client-side p50 of each backend's search call, in ms (same process, same passages). */
  p50Ms: { sqlite: number; postgres: number };
  differences: ParityDifference[];
  /**
   * The same queries with a metadata filter that keeps every other manual (FILTERED), run inside
   * each index: whether both find the same passages, whether every result passes the filter, and
   * what the filter costs.
   */
  filtered: {
    sameMatches: number;
    sameTop: number;
    /** Queries where a result of a manual the filter leaves out came back (must be 0). */
    leaks: number;
    p50Ms: { sqlite: number; postgres: number };
  };
}

/** PostgreSQL's figures at the top level (as reports before Elasticsearch joined have them). */
export interface ParityResult extends EngineParity {
  manuals: number;
  passages: number;
  queries: number;
  /**
   * Elasticsearch against SQLite, where a node was named (ELASTICSEARCH_URL); `p50Ms.postgres` and
   * each difference's `postgres` are Elasticsearch's there. Null or absent: not run.
   */
  elasticsearch?: (EngineParity & { version: string }) | null;
}

/** The filter of the filtered runs: the manuals of even position (metadataTerms compares "even"). */
const FILTERED: FileFilter = { metadata: { half: "even" } };

async function* streamOf(passages: readonly ExtractedPassage[]): AsyncGenerator<ExtractedPassage> {
  for (const p of passages) yield await Promise.resolve(p);
}

/** A result as the comparison sees it: the manual and the place. */
function placeOf(names: ReadonlyMap<string, string>, hit: PassageHit): string {
  const l = hit.locator as StoredLocator & { page?: number; line?: number; line_end?: number };
  return `${names.get(hit.fileId) ?? hit.fileId} p${l.page}:${l.line}-${l.line_end ?? l.line}`;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? 0 : sorted[Math.floor((sorted.length - 1) / 2)]!;
};
const ms = (values: number[]) => Math.round(median(values) * 100) / 100;

/** What one query gave in one engine: the first five, all matches, and the same filtered. */
interface Answers {
  top: string[];
  all: string[];
  filteredTop: string[];
  filteredAll: string[];
}

/** SQLite's answers against another engine's, query after query. */
class Tally {
  private sameMatches = 0;
  private sameTop = 0;
  private sameFirst = 0;
  private overlap = 0;
  private queries = 0;
  private readonly differences: ParityDifference[] = [];
  private readonly filtered = { sameMatches: 0, sameTop: 0, leaks: 0 };

  constructor(private readonly keeps: (place: string) => boolean) {}

  add(query: string, a: Answers, b: Answers): void {
    this.queries += 1;
    if (a.all.join("\n") === b.all.join("\n")) this.sameMatches += 1;
    if (a.top.join("\n") === b.top.join("\n")) this.sameTop += 1;
    else this.differences.push({ query, sqlite: a.top, postgres: b.top });
    if (a.top[0] === b.top[0]) this.sameFirst += 1;
    const shared = a.top.filter((place) => b.top.includes(place)).length;
    this.overlap += shared / Math.max(1, Math.min(TOP, Math.max(a.top.length, b.top.length)));
    if (a.filteredAll.join("\n") === b.filteredAll.join("\n")) this.filtered.sameMatches += 1;
    if (a.filteredTop.join("\n") === b.filteredTop.join("\n")) this.filtered.sameTop += 1;
    if ([...a.filteredAll, ...b.filteredAll].some((place) => !this.keeps(place))) this.filtered.leaks += 1;
  }

  result(timings: { sqlite: Timings; other: Timings }): EngineParity {
    return {
      sameMatches: this.sameMatches,
      sameTop: this.sameTop,
      sameFirst: this.sameFirst,
      meanOverlap: Math.round((this.overlap / Math.max(1, this.queries)) * 1000) / 1000,
      p50Ms: { sqlite: ms(timings.sqlite.plain), postgres: ms(timings.other.plain) },
      differences: this.differences.slice(0, LISTED),
      filtered: {
        ...this.filtered,
        p50Ms: { sqlite: ms(timings.sqlite.filtered), postgres: ms(timings.other.filtered) },
      },
    };
  }
}

interface Timings {
  plain: number[];
  filtered: number[];
}

/** Elasticsearch at ELASTICSEARCH_URL, in an index of the run's own (deleted afterwards), or null. */
async function elasticsearchIndex(): Promise<{ index: ElasticsearchSearchIndex; version: string } | null> {
  const node = process.env.ELASTICSEARCH_URL;
  if (!node) return null;
  const admin = new Client({ node });
  try {
    const info = await admin.nodes.info({ node_id: "_local", filter_path: "nodes.*.version" });
    const version = Object.values(info.nodes ?? {})[0]?.version ?? "?";
    return {
      index: new ElasticsearchSearchIndex({
        node,
        indexPrefix: `locus-bench-parity-${randomUUID().slice(0, 8)}`,
        requestTimeoutMs: 30_000,
      }),
      version,
    };
  } finally {
    await admin.close();
  }
}

/** Deletes the parity run's Elasticsearch index by name (wildcard deletes are refused by default). */
async function dropElasticsearchIndex(index: ElasticsearchSearchIndex): Promise<void> {
  await index.close();
  const admin = new Client({ node: process.env.ELASTICSEARCH_URL! });
  try {
    const names = Object.keys(
      await admin.indices.get({ index: `${index.aliasName}-*`, allow_no_indices: true }),
    );
    if (names.length > 0) await admin.indices.delete({ index: names });
  } finally {
    await admin.close();
  }
}

export async function benchParity(log: (line: string) => void): Promise<ParityResult> {
  const dir = mkdtempSync(join(tmpdir(), "locus-bench-parity-"));
  const schema = `locus_bench_parity_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const sqlite = new SqliteSearchIndex(join(dir, "index.db"));
  const postgres = new PostgresSearchIndex({ connectionString: TEST_DATABASE_URL, schema });
  const elasticsearch = await elasticsearchIndex();
  try {
    const userId = randomUUID();
    const names = new Map<string, string>();
    /** The manuals FILTERED keeps. */
    const kept = new Set<string>();
    const engines: { name: string; index: SearchIndex; timings: Timings }[] = [
      { name: "sqlite", index: sqlite, timings: { plain: [], filtered: [] } },
      { name: "postgres", index: postgres, timings: { plain: [], filtered: [] } },
      ...(elasticsearch
        ? [{ name: "elasticsearch", index: elasticsearch.index, timings: { plain: [], filtered: [] } }]
        : []),
    ];
    let passages = 0;
    for (const name of PARITY_MANUALS) {
      const extraction = await extractPdf(readFileSync(join(QUALITY_FIXTURES, name)));
      const read: ExtractedPassage[] = [];
      for await (const p of extraction.passages) read.push(p);
      const half = names.size % 2 === 0 ? "even" : "odd";
      const file = {
        userId,
        fileId: randomUUID(),
        attributes: { fileType: "pdf" as const, createdAt: new Date().toISOString(), metadata: { half } },
      };
      names.set(file.fileId, name);
      if (half === "even") kept.add(name);
      for (const engine of engines) await engine.index.replaceFilePassages(file, streamOf(read));
      passages += read.length;
      log(`parity: ${name}: ${read.length} passages in ${engines.map((e) => e.name).join(", ")}`);
    }

    const manualOf = (place: string) => place.slice(0, place.lastIndexOf(" p"));
    const keeps = (place: string) => kept.has(manualOf(place));
    const places = async (
      index: SearchIndex,
      text: string,
      limit: number,
      filter?: FileFilter,
      into?: number[],
    ) => {
      const started = performance.now();
      const hits = await index.search({ userId, text, limit, ...(filter ? { filter } : {}) });
      into?.push(performance.now() - started);
      return hits.map((h) => placeOf(names, h));
    };
    const answers = async (engine: (typeof engines)[number], text: string): Promise<Answers> => ({
      top: await places(engine.index, text, TOP, undefined, engine.timings.plain),
      all: (await places(engine.index, text, 1000)).sort(),
      filteredTop: await places(engine.index, text, TOP, FILTERED, engine.timings.filtered),
      filteredAll: (await places(engine.index, text, 1000, FILTERED)).sort(),
    });
    const tallies = new Map(engines.slice(1).map((e) => [e.name, new Tally(keeps)]));
    const asked = parityQueries();
    for (const text of asked) {
      const reference = await answers(engines[0]!, text);
      for (const engine of engines.slice(1))
        tallies.get(engine.name)!.add(text, reference, await answers(engine, text));
    }
    const timingsOf = (name: string) => engines.find((e) => e.name === name)!.timings;
    const against = (name: string) =>
      tallies.get(name)!.result({ sqlite: timingsOf("sqlite"), other: timingsOf(name) });
    const result: ParityResult = {
      manuals: PARITY_MANUALS.length,
      passages,
      queries: asked.length,
      ...against("postgres"),
      elasticsearch: elasticsearch ? { ...against("elasticsearch"), version: elasticsearch.version } : null,
    };
    const line = (name: string, p: EngineParity) =>
      `parity, SQLite and ${name}: ${asked.length} queries: same matches ${p.sameMatches}, same top ${TOP} ${p.sameTop}, ` +
      `same first ${p.sameFirst}, mean overlap ${p.meanOverlap}; filtered to half the manuals: same matches ` +
      `${p.filtered.sameMatches}, same top ${TOP} ${p.filtered.sameTop}, leaks ${p.filtered.leaks}`;
    log(line("PostgreSQL", result));
    if (result.elasticsearch)
      log(line(`Elasticsearch ${result.elasticsearch.version}`, result.elasticsearch));
    return result;
  } finally {
    await sqlite.close();
    await postgres.close();
    if (elasticsearch) await dropElasticsearchIndex(elasticsearch.index);
    rmSync(dir, { recursive: true, force: true });
    await dropTestSchema(schema);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const result = await benchParity((line) => console.log(line));
  console.log(JSON.stringify(result, null, 2));
}
