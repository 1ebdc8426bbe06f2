/**
 * Ranking parity: the embedded index (SQLite FTS5) and the split shape's (PostgreSQL) given the same
 * passages of real manuals and the same queries, compared result by result. Both shapes must find
 * the same passages for a query (one set of terms, held by the contract suite); this measures how
 * far their rankings still differ, and lists the queries where they do.
 *
 * Run alone: `node --import tsx bench/parity.ts` (needs PostgreSQL at DATABASE_URL, default the
 * test database CI starts); `pnpm bench --only split` runs it with the split benchmarks.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ExtractedPassage, FileFilter, StoredLocator } from "@locus/contracts";
import { extractPdf } from "@locus/pdf-reader";
import {
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
  postgres: string[];
}

export interface ParityResult {
  manuals: number;
  passages: number;
  queries: number;
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

export async function benchParity(log: (line: string) => void): Promise<ParityResult> {
  const dir = mkdtempSync(join(tmpdir(), "locus-bench-parity-"));
  const schema = `locus_bench_parity_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const sqlite = new SqliteSearchIndex(join(dir, "index.db"));
  const postgres = new PostgresSearchIndex({ connectionString: TEST_DATABASE_URL, schema });
  try {
    const userId = randomUUID();
    const names = new Map<string, string>();
    /** The manuals FILTERED keeps. */
    const kept = new Set<string>();
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
      await sqlite.replaceFilePassages(file, streamOf(read));
      await postgres.replaceFilePassages(file, streamOf(read));
      passages += read.length;
      log(`parity: ${name}: ${read.length} passages in both indexes`);
    }

    const asked = parityQueries();
    const timings = { sqlite: [] as number[], postgres: [] as number[] };
    const filteredTimings = { sqlite: [] as number[], postgres: [] as number[] };
    const timed = async (
      index: SearchIndex,
      into: number[],
      text: string,
      limit: number,
      filter?: FileFilter,
    ) => {
      const started = performance.now();
      const hits = await index.search({ userId, text, limit, ...(filter ? { filter } : {}) });
      into.push(performance.now() - started);
      return hits.map((h) => placeOf(names, h));
    };
    const filtered = { sameMatches: 0, sameTop: 0, leaks: 0 };
    const manualOf = (place: string) => place.slice(0, place.lastIndexOf(" p"));
    let sameMatches = 0;
    let sameTop = 0;
    let sameFirst = 0;
    let overlap = 0;
    const differences: ParityDifference[] = [];
    for (const text of asked) {
      const a = await timed(sqlite, timings.sqlite, text, TOP);
      const b = await timed(postgres, timings.postgres, text, TOP);
      const allA = (await sqlite.search({ userId, text, limit: 1000 })).map((h) => placeOf(names, h)).sort();
      const allB = (await postgres.search({ userId, text, limit: 1000 }))
        .map((h) => placeOf(names, h))
        .sort();
      if (allA.join("\n") === allB.join("\n")) sameMatches += 1;
      if (a.join("\n") === b.join("\n")) sameTop += 1;
      else differences.push({ query: text, sqlite: a, postgres: b });
      if (a[0] === b[0]) sameFirst += 1;
      const shared = a.filter((place) => b.includes(place)).length;
      overlap += shared / Math.max(1, Math.min(TOP, Math.max(a.length, b.length)));

      const fa = await timed(sqlite, filteredTimings.sqlite, text, TOP, FILTERED);
      const fb = await timed(postgres, filteredTimings.postgres, text, TOP, FILTERED);
      const fallA = (await timed(sqlite, [], text, 1000, FILTERED)).sort();
      const fallB = (await timed(postgres, [], text, 1000, FILTERED)).sort();
      if (fallA.join("\n") === fallB.join("\n")) filtered.sameMatches += 1;
      if (fa.join("\n") === fb.join("\n")) filtered.sameTop += 1;
      if ([...fallA, ...fallB].some((place) => !kept.has(manualOf(place)))) filtered.leaks += 1;
    }
    const result: ParityResult = {
      manuals: PARITY_MANUALS.length,
      passages,
      queries: asked.length,
      sameMatches,
      sameTop,
      sameFirst,
      meanOverlap: Math.round((overlap / asked.length) * 1000) / 1000,
      p50Ms: {
        sqlite: Math.round(median(timings.sqlite) * 100) / 100,
        postgres: Math.round(median(timings.postgres) * 100) / 100,
      },
      differences: differences.slice(0, LISTED),
      filtered: {
        ...filtered,
        p50Ms: {
          sqlite: Math.round(median(filteredTimings.sqlite) * 100) / 100,
          postgres: Math.round(median(filteredTimings.postgres) * 100) / 100,
        },
      },
    };
    log(
      `parity: ${asked.length} queries: same matches ${sameMatches}, same top ${TOP} ${sameTop}, same first ${sameFirst}, mean overlap ${result.meanOverlap}`,
    );
    log(
      `parity, filtered to half the manuals: same matches ${filtered.sameMatches}, same top ${TOP} ${filtered.sameTop}, leaks ${filtered.leaks}`,
    );
    return result;
  } finally {
    await sqlite.close();
    await postgres.close();
    rmSync(dir, { recursive: true, force: true });
    await dropTestSchema(schema);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const result = await benchParity((line) => console.log(line));
  console.log(JSON.stringify(result, null, 2));
}
