import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { FIXTURES_DIR } from "../harness/paths.ts";
import { assertRunning } from "../harness/cleanup.ts";
import { client, createSqliteMetadataStore, createUserWithKey } from "../harness/deps.ts";
import { since, withServer, withTempDir } from "../harness/harness.ts";
import { ingest, type PdfRun } from "../pdf/pdf-ingestion.ts";
import {
  documentHit,
  linesAway,
  SPEECH_TOLERANCE_S,
  speechHit,
  tokensOf,
  type FixtureFile,
  type QualityFixtures,
  type ResultLocator,
} from "./quality-truth.ts";
import { quantile, round } from "../harness/stats.ts";

/**
 * Retrieval quality on real material (`pnpm bench --only quality`): where search results land, for
 * queries whose truth was made apart from Locus (bench/fixtures/quality/, made by quality-make.ts).
 * Three users on one all-in-one server: one with the three PDF manuals, one with the three page
 * images, one with the two recordings; every query is searched as its kind's user, in quick and in
 * ai mode. Nothing here depends on timing: files are waited for until ready (or a generous limit),
 * and searches run one at a time.
 */
export interface QualityBenchOptions {
  /** Results asked for per search (the API's default); "found" means within them. */
  limit: number;
  /** Longest wait for one fixture to be ready. */
  readyTimeoutMs: number;
  modes: Mode[];
}

export type Mode = "quick" | "ai";

export const DEFAULT_QUALITY_OPTIONS: QualityBenchOptions = {
  limit: 50,
  readyTimeoutMs: 15 * 60_000,
  modes: ["quick", "ai"],
};

const FIXTURES = join(FIXTURES_DIR, "quality");
const REQUEST_TIMEOUT_MS = 120_000;

/**
 * The users' ids, fixed: the embedded index prefixes each term with a hash of its user's id, and
 * its stemmer once treated the same word differently for different prefixes, so results depended
 * on the user (see tenantSpread). Fixed ids make two runs of the same code give the same ranks.
 * "pdf-2" and "pdf-3" hold the PDFs again, to show that the user alone changes nothing.
 */
export const TENANTS = {
  pdf: "5f0c2a1e-7d4b-4c3a-9e21-0b6d8f3a4c01",
  image: "a3e47b90-2c1f-4d58-8b6e-7f20c9d1e302",
  audio: "c81d5e27-94a0-4b3f-a6c2-1e8f7d0b5a03",
  "pdf-2": "0e9b6c14-5a7d-4f2e-b3c8-d4a1f6e20904",
  "pdf-3": "e2f7a8c3-1b6d-4e90-8f5a-3c7b9d0e1f05",
} as const;
type Tenant = keyof typeof TENANTS;
const emailOf = (tenant: Tenant) => `quality-${tenant}@bench.invalid`;

/**
 * Creates the users with their fixed ids before the server starts: through the metadata store,
 * then the id is set with SQL (the store always draws a random one). Returns false, leaving
 * random ids, when the store's table is not as expected.
 */
async function createTenants(dataDir: string, log: (line: string) => void): Promise<boolean> {
  const users = (Object.entries(TENANTS) as [Tenant, string][]).map(([tenant, id]) => ({
    email: emailOf(tenant),
    id,
  }));
  return createUsersWithIds(dataDir, users, (err) =>
    log(`quality: could not fix the users' ids (${String(err)}); results depend on random ids`),
  );
}

/**
 * Creates enterprise users with fixed ids in a data directory's metadata store, before the server
 * starts (see TENANTS for why the ids matter). A user that exists already is left as it is.
 * Returns whether every user has its fixed id; false (after calling `failed`) when the store's
 * table is not as expected, leaving random ids.
 */
export async function createUsersWithIds(
  dataDir: string,
  users: readonly { email: string; id: string }[],
  failed: (err: unknown) => void,
): Promise<boolean> {
  const path = join(dataDir, "metadata.sqlite");
  const store = createSqliteMetadataStore(path);
  const created: { email: string; id: string }[] = [];
  let existingRight = true;
  try {
    await store.migrate();
    for (const user of users) {
      const existing = await store.findUserByEmail(user.email);
      if (existing) existingRight &&= existing.id === user.id;
      else {
        await store.createUser({ email: user.email, plan: "enterprise" });
        created.push(user);
      }
    }
  } finally {
    await store.close();
  }
  if (created.length === 0) return existingRight;
  try {
    // The driver the metadata store runs on, resolved from that package.
    const Database = createRequire(import.meta.resolve("@locus/metadata-store"))("better-sqlite3") as new (
      path: string,
    ) => {
      prepare(sql: string): { run(...params: unknown[]): { changes: number } };
      close(): void;
    };
    const db = new Database(path);
    try {
      for (const { email, id } of created) {
        const { changes } = db.prepare("UPDATE users SET id = ? WHERE email = ?").run(id, email);
        if (changes !== 1) throw new Error(`user ${email} not found`);
      }
    } finally {
      db.close();
    }
    return existingRight;
  } catch (err) {
    failed(err);
    return false;
  }
}

export interface Spread {
  n: number;
  median: number | null;
  p90: number | null;
}

/** One row of figures: a kind, a category and a mode. */
export interface QualityRow {
  kind: "pdf" | "image" | "audio";
  category: string;
  mode: Mode;
  queries: number;
  hitAt1: number;
  hitAt5: number;
  mrr: number;
  /** Queries with a right result anywhere in the `limit` results. */
  found: number;
  /** Best-ranked result of the right file (and page, for documents): how far from the truth. */
  away: Spread;
  /** ...and how wide (lines, or seconds). */
  span: Spread;
  /** Queries with no result of the right file (and page) at all. */
  noResultInPlace: number;
}

export interface QueryOutcome {
  id: string;
  mode: Mode;
  /** 1-based rank of the first right result, or null. */
  rank: number | null;
  /** The best-ranked result of the right file (and page): its locator, or null. */
  best: ResultLocator | null;
  /** Lines (documents) or seconds (speech, signed: result start − truth start) from the truth. */
  away: number | null;
}

export interface SpeechHeard {
  category: string;
  mode: Mode;
  phrases: number;
  /** Every word of the query is in one passage of the recording. */
  heardRight: number;
  /** Of those, the queries whose first right-file result starts within the tolerance. */
  hitWithinToleranceAmongHeard: number;
}

export interface QualityBenchResult {
  /** What the figures come from. */
  material: string;
  files: { name: string; kind: string; bytes: number; source: string; derivedFrom: string | null }[];
  queries: { kind: string; category: string; count: number }[];
  rows: QualityRow[];
  speech: SpeechHeard[];
  /** Seconds from a speech result's start to the phrase's start (signed), quick mode, phrase queries. */
  speechOffsetsS: { median: number | null; p10: number | null; p90: number | null };
  /** Hyphen-broken words quick mode did not find in the `limit` results. */
  hyphenMissedQuick: string[];
  /**
   * Hyphen-broken words stored whole on the line where they begin (read from the file's passages,
   * GET /api/files/{id}/passages): a query for the word matches that line. Null when the server
   * has no passages endpoint (before it existed).
   */
  hyphenWholeAtLine: { kind: string; words: number; wholeAtLine: number; missing: string[] }[] | null;
  /** ai questions (natural language) missed in the top 5, by mode. */
  aiQuestionsMissedAt5: Record<Mode, string[]>;
  quickLatencyMs: { p50: number; n: number };
  ingestion: {
    file: string;
    serverReadyMs: number;
    /** With the meaning stage: until its passages had their vectors too (see PdfRun). */
    serverAiReadyMs?: number;
    passages: number;
    pages: number;
  }[];
  toleranceS: number;
  /** Whether the users had the fixed ids of TENANTS (else random ones, and ranks may vary by run). */
  fixedUserIds: boolean;
  /** The PDF queries (quick) as three users holding the same PDFs, searched on one index. */
  tenantSpread: TenantSpread[];
  outcomes: QueryOutcome[];
}

export interface TenantSpread {
  tenant: string;
  userId: string;
  rows: { category: string; queries: number; hitAt1: number; hitAt5: number; found: number }[];
  /** PDF queries whose rank differs from the first user's (on the same index). */
  ranksDifferingFromFirst: number;
}

interface SearchResult {
  file_id: string;
  content: string;
  locator: ResultLocator;
}

/**
 * One search, answered 200 (a 429 is waited out and retried), with its client-side duration; the
 * response body as JSON.
 */
export async function searchJson<T>(
  baseUrl: string,
  key: string,
  q: string,
  mode: Mode,
  limit: number,
): Promise<{ body: T; ms: number }> {
  for (let attempt = 0; ; attempt++) {
    const started = performance.now();
    const res = await fetch(`${baseUrl}/api/search?q=${encodeURIComponent(q)}&mode=${mode}&limit=${limit}`, {
      headers: { Authorization: `Bearer ${key}` },
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await res.text();
    const ms = since(started);
    if (res.status === 429 && attempt < 20) {
      await new Promise((r) => setTimeout(r, 1000));
      continue;
    }
    if (res.status !== 200)
      throw new Error(`search "${q}" (${mode}) answered ${res.status}: ${text.slice(0, 300)}`);
    return { body: JSON.parse(text) as T, ms };
  }
}

async function search(
  baseUrl: string,
  key: string,
  q: string,
  mode: Mode,
  limit: number,
): Promise<{ results: SearchResult[]; ms: number }> {
  const { body, ms } = await searchJson<{ results: SearchResult[] }>(baseUrl, key, q, mode, limit);
  return { results: body.results, ms };
}

/**
 * Uploads a file as the key's user and waits until it is ready (throwing when it fails or takes
 * longer than `readyTimeoutMs`); its id is read back from the file list.
 */
export async function uploadReady(
  baseUrl: string,
  key: string,
  bytes: Buffer,
  name: string,
  readyTimeoutMs: number,
): Promise<{ id: string; run: PdfRun }> {
  const c = client(baseUrl, key);
  const run = await ingest(c, bytes, name, 250, readyTimeoutMs);
  const list = (await (await c.get("/api/files")).json()) as { id: string; original_name: string }[];
  const id = list.find((x) => x.original_name === name)?.id;
  if (!id) throw new Error(`${name} is not in the file list after upload`);
  return { id, run };
}

interface StoredPassage {
  content: string;
  locator: ResultLocator;
}

/** Every passage of a file, in reading order, or null when the server has no passages endpoint. */
async function filePassages(baseUrl: string, key: string, fileId: string): Promise<StoredPassage[] | null> {
  const all: StoredPassage[] = [];
  for (let offset: number | null = 0; offset !== null;) {
    const res = await fetch(`${baseUrl}/api/files/${fileId}/passages?offset=${offset}&limit=500`, {
      headers: { Authorization: `Bearer ${key}` },
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    if (res.status === 404) return null;
    if (res.status !== 200) throw new Error(`passages of ${fileId} answered ${res.status}`);
    const page = (await res.json()) as { passages: StoredPassage[]; next_offset: number | null };
    all.push(...page.passages);
    offset = page.next_offset;
  }
  return all;
}

/**
 * For each hyphen-broken word, whether some passage holds it whole on the line where it begins
 * (the truth's page and line): what makes the word findable there by its whole form, whatever
 * else in the file ranks above it for a one-word query.
 */
async function wholeAtLine(
  baseUrl: string,
  keyOf: (tenant: Tenant) => string,
  ids: ReadonlyMap<string, string>,
  queries: QualityFixtures["documentQueries"],
): Promise<QualityBenchResult["hyphenWholeAtLine"]> {
  const hyphens = queries.filter((q) => q.category === "hyphen");
  const byFile = new Map<string, StoredPassage[]>();
  for (const name of new Set(hyphens.map((q) => q.file))) {
    const kind = hyphens.find((q) => q.file === name)?.kind ?? "pdf";
    const passages = await filePassages(baseUrl, keyOf(kind), ids.get(name) ?? "");
    if (passages === null) return null;
    byFile.set(name, passages);
  }
  return (["pdf", "image"] as const).map((kind) => {
    const mine = hyphens.filter((q) => q.kind === kind);
    const missing = mine.filter((q) => {
      const word = new RegExp(`(^|[^\\p{L}])${q.q}([^\\p{L}]|$)`, "iu");
      return !(byFile.get(q.file) ?? []).some((p) => {
        const { page, line, line_end: end } = p.locator;
        if (page !== q.page || line === undefined || q.line < line || q.line > (end ?? line)) return false;
        return word.test(p.content.split("\n")[q.line - line] ?? "");
      });
    });
    return {
      kind,
      words: mine.length,
      wholeAtLine: mine.length - missing.length,
      missing: missing.map((q) => `${q.q} (${q.file} p${q.page} l${q.line})`),
    };
  });
}

/** Median and p90 of `values` (null when there are none). */
export const spread = (values: number[]): Spread => {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    n: sorted.length,
    median: sorted.length === 0 ? null : round(quantile(sorted, 0.5)),
    p90: sorted.length === 0 ? null : round(quantile(sorted, 0.9)),
  };
};

interface Scored {
  kind: "pdf" | "image" | "audio";
  category: string;
  mode: Mode;
  rank: number | null;
  away: number | null;
  span: number | null;
}

function rowsOf(scored: readonly Scored[]): QualityRow[] {
  const groups = new Map<string, Scored[]>();
  for (const s of scored) {
    const k = `${s.kind}\u0000${s.category}\u0000${s.mode}`;
    groups.set(k, [...(groups.get(k) ?? []), s]);
  }
  return [...groups.values()].map((g) => {
    const first = g[0]!;
    const placed = g.filter((s) => s.away !== null);
    return {
      kind: first.kind,
      category: first.category,
      mode: first.mode,
      queries: g.length,
      hitAt1: g.filter((s) => s.rank === 1).length,
      hitAt5: g.filter((s) => s.rank !== null && s.rank <= 5).length,
      mrr:
        Math.round((g.reduce((sum, s) => sum + (s.rank === null ? 0 : 1 / s.rank), 0) / g.length) * 1000) /
        1000,
      found: g.filter((s) => s.rank !== null).length,
      away: spread(placed.map((s) => Math.abs(s.away!))),
      span: spread(placed.map((s) => s.span!)),
      noResultInPlace: g.length - placed.length,
    };
  });
}

const describeSource = (f: FixtureFile) =>
  `${f.source.package} ${f.source.version}, ${f.source.path}; ${f.source.licence}`;

export function loadFixtures(): QualityFixtures {
  return JSON.parse(readFileSync(join(FIXTURES, "queries.json"), "utf8")) as QualityFixtures;
}

export async function benchQuality(
  options: QualityBenchOptions,
  log: (line: string) => void,
): Promise<QualityBenchResult> {
  const fixtures = loadFixtures();
  const bytes = new Map(fixtures.files.map((f) => [f.name, readFileSync(join(FIXTURES, f.name))]));

  return withTempDir("locus-bench-quality-", async (dataDir) => {
    const fixedIds = await createTenants(dataDir, log);
    return withServer(dataDir, { LOCUS_RATE_LIMIT_ENTERPRISE: "100000" }, async (server) => {
      const keys = new Map<Tenant, string>();
      for (const tenant of Object.keys(TENANTS) as Tenant[])
        keys.set(
          tenant,
          (await createUserWithKey(dataDir, { email: emailOf(tenant), plan: "enterprise" })).key,
        );
      const keyOf = (tenant: Tenant) => keys.get(tenant)!;

      // Upload every fixture as its kind's user, one at a time in a fixed order, each waited for
      // until ready: the index then holds the same passages in the same order every run, so
      // results of equal score come back in the same order too.
      log(`quality: uploading ${fixtures.files.length} files of real material, one at a time ...`);
      const ids = new Map<string, string>();
      const ingestion: QualityBenchResult["ingestion"] = [];
      const upload = (tenant: Tenant, name: string) =>
        uploadReady(server.baseUrl, keyOf(tenant), bytes.get(name)!, name, options.readyTimeoutMs);
      for (const f of fixtures.files) {
        assertRunning();
        const { id, run } = await upload(f.kind, f.name);
        ids.set(f.name, id);
        const aiReady = run.serverAiReadyMs === undefined ? "" : `, its vectors ${run.serverAiReadyMs} ms`;
        log(
          `quality: ${f.name} ready, ${run.passageCount} passages (${run.serverReadyMs} ms on the server${aiReady})`,
        );
        ingestion.push({
          file: f.name,
          serverReadyMs: run.serverReadyMs,
          ...(run.serverAiReadyMs === undefined ? {} : { serverAiReadyMs: run.serverAiReadyMs }),
          passages: run.passageCount,
          pages: run.pageCount,
        });
      }

      const scored: Scored[] = [];
      const outcomes: QueryOutcome[] = [];
      const quickMs: number[] = [];
      const hyphenMissedQuick: string[] = [];
      const aiQuestionsMissedAt5: Record<Mode, string[]> = { quick: [], ai: [] };

      const docs = [
        ...fixtures.documentQueries.map((q) => ({ ...q, aiQuestion: false })),
        ...fixtures.aiQuestions.map((q) => ({
          ...q,
          kind: "pdf" as const,
          category: "question",
          aiQuestion: true,
        })),
      ];
      for (const mode of options.modes) {
        log(`quality: ${docs.length} document queries, ${mode} mode ...`);
        for (const q of docs) {
          assertRunning();
          const fileId = ids.get(q.file)!;
          const { results, ms } = await search(server.baseUrl, keyOf(q.kind), q.q, mode, options.limit);
          if (mode === "quick") quickMs.push(ms);
          const index = results.findIndex((r) => r.file_id === fileId && documentHit(q, r.locator));
          const rank = index < 0 ? null : index + 1;
          const best =
            results.find((r) => r.file_id === fileId && r.locator.page === q.page)?.locator ?? null;
          const away = best === null ? null : linesAway(q, best);
          const span = best?.line === undefined ? null : (best.line_end ?? best.line) - best.line + 1;
          const categories = [q.category];
          if (q.category === "hyphen" && "onlyOccurrence" in q && q.onlyOccurrence)
            categories.push("hyphen, printed whole nowhere else");
          for (const category of categories)
            scored.push({ kind: q.kind, category, mode, rank, away, span: away === null ? null : span });
          outcomes.push({ id: q.id, mode, rank, best, away });
          if (mode === "quick" && q.category === "hyphen" && rank === null)
            hyphenMissedQuick.push(`${q.q} (${q.file} p${q.page} l${q.line})`);
          if (q.aiQuestion && (rank === null || rank > 5)) aiQuestionsMissedAt5[mode].push(q.q);
        }
      }

      // Speech: the recordings' passages, gathered by searching every word the queries use.
      log(`quality: ${fixtures.speechQueries.length} speech queries ...`);
      const passages = new Map<string, { fileId: string; tokens: Set<string> }>();
      const words = new Set(fixtures.speechQueries.flatMap((q) => tokensOf(q.q)));
      for (const w of words) {
        const { results } = await search(server.baseUrl, keyOf("audio"), w, "quick", 100);
        for (const r of results)
          passages.set(`${r.file_id}@${r.locator.timestamp}`, {
            fileId: r.file_id,
            tokens: new Set(tokensOf(r.content)),
          });
      }
      const heard = new Map<string, boolean>();
      for (const q of fixtures.speechQueries) {
        const fileId = ids.get(q.file)!;
        const need = tokensOf(q.q);
        heard.set(
          q.id,
          [...passages.values()].some((p) => p.fileId === fileId && need.every((w) => p.tokens.has(w))),
        );
      }
      const speech: SpeechHeard[] = [];
      const offsets: number[] = [];
      for (const mode of options.modes) {
        const byCategory = new Map<string, SpeechHeard>();
        for (const q of fixtures.speechQueries) {
          assertRunning();
          const fileId = ids.get(q.file)!;
          const { results, ms } = await search(server.baseUrl, keyOf("audio"), q.q, mode, options.limit);
          if (mode === "quick") quickMs.push(ms);
          const index = results.findIndex((r) => r.file_id === fileId && speechHit(q, r.locator));
          const rank = index < 0 ? null : index + 1;
          const best = results.find((r) => r.file_id === fileId)?.locator ?? null;
          const away =
            best?.timestamp === undefined ? null : Math.round((best.timestamp - q.start) * 100) / 100;
          const span =
            best?.timestamp === undefined
              ? null
              : Math.round(((best.timestamp_end ?? best.timestamp) - best.timestamp) * 100) / 100;
          scored.push({ kind: "audio", category: q.category, mode, rank, away, span });
          outcomes.push({ id: q.id, mode, rank, best, away });
          if (mode === "quick" && q.category === "phrase" && away !== null) offsets.push(away);
          const h = byCategory.get(q.category) ?? {
            category: q.category,
            mode,
            phrases: 0,
            heardRight: 0,
            hitWithinToleranceAmongHeard: 0,
          };
          h.phrases++;
          if (heard.get(q.id)) {
            h.heardRight++;
            if (best !== null && speechHit(q, best)) h.hitWithinToleranceAmongHeard++;
          }
          byCategory.set(q.category, h);
        }
        speech.push(...byCategory.values());
      }

      // The same PDFs and queries as two other users (quick mode): what the user alone changes.
      // Last, so that the figures above come from an index holding the fixtures once; the three
      // users are then searched on the same index (which holds the PDFs three times).
      const pdfDocs = docs.filter((q) => q.kind === "pdf");
      const spreadTenants = ["pdf", "pdf-2", "pdf-3"] as const;
      const tenantIds = new Map<Tenant, Map<string, string>>([["pdf", ids]]);
      for (const tenant of spreadTenants.slice(1)) {
        log(`quality: the PDFs again as user ${tenant} ...`);
        const own = new Map<string, string>();
        for (const f of fixtures.files.filter((x) => x.kind === "pdf"))
          own.set(f.name, (await upload(tenant, f.name)).id);
        tenantIds.set(tenant, own);
      }
      const tenantSpread: TenantSpread[] = [];
      const firstRanks = new Map<string, number | null>();
      for (const tenant of spreadTenants) {
        const ranks: { category: string; rank: number | null }[] = [];
        let differing = 0;
        for (const q of pdfDocs) {
          assertRunning();
          const { results } = await search(server.baseUrl, keyOf(tenant), q.q, "quick", options.limit);
          const fileId = tenantIds.get(tenant)!.get(q.file)!;
          const index = results.findIndex((r) => r.file_id === fileId && documentHit(q, r.locator));
          const rank = index < 0 ? null : index + 1;
          if (tenant === "pdf") firstRanks.set(q.id, rank);
          else if (rank !== firstRanks.get(q.id)) differing++;
          ranks.push({ category: q.category, rank });
        }
        tenantSpread.push({
          tenant,
          userId: fixedIds ? TENANTS[tenant] : "random",
          rows: [...new Set(ranks.map((r) => r.category))].map((category) => {
            const g = ranks.filter((r) => r.category === category);
            return {
              category,
              queries: g.length,
              hitAt1: g.filter((r) => r.rank === 1).length,
              hitAt5: g.filter((r) => r.rank !== null && r.rank <= 5).length,
              found: g.filter((r) => r.rank !== null).length,
            };
          }),
          ranksDifferingFromFirst: differing,
        });
      }

      const sortedOffsets = [...offsets].sort((a, b) => a - b);
      const sortedMs = [...quickMs].sort((a, b) => a - b);
      const count = (kind: string, category: string) =>
        kind === "audio"
          ? fixtures.speechQueries.filter((q) => q.category === category).length
          : category === "question"
            ? fixtures.aiQuestions.length
            : fixtures.documentQueries.filter((q) => q.kind === kind && q.category === category).length;
      const kinds: [string, string][] = [
        ["pdf", "line"],
        ["pdf", "hyphen"],
        ["pdf", "question"],
        ["image", "line"],
        ["image", "hyphen"],
        ["audio", "phrase"],
        ["audio", "keywords"],
      ];
      const rows = rowsOf(scored);
      for (const r of rows.filter((x) => x.mode === "quick"))
        log(
          `quality: ${r.kind} ${r.category} quick: hit@1 ${r.hitAt1}/${r.queries}, hit@5 ${r.hitAt5}/${r.queries}, MRR ${r.mrr}`,
        );
      return {
        material:
          "Real material from Debian packages: three PDF manuals, three of their pages as images (one photo-like), and two recordings " +
          "of a real voice (Asterisk's English prompts) joined at constructed offsets",
        files: fixtures.files.map((f) => ({
          name: f.name,
          kind: f.kind,
          bytes: f.bytes,
          source: describeSource(f),
          derivedFrom: f.derivedFrom
            ? `${f.derivedFrom.page === undefined ? "" : `page ${f.derivedFrom.page} of `}${f.derivedFrom.file}: ${f.derivedFrom.how}`
            : null,
        })),
        queries: kinds.map(([kind, category]) => ({ kind, category, count: count(kind, category) })),
        rows,
        speech,
        speechOffsetsS: {
          median: sortedOffsets.length ? round(quantile(sortedOffsets, 0.5)) : null,
          p10: sortedOffsets.length ? round(quantile(sortedOffsets, 0.1)) : null,
          p90: sortedOffsets.length ? round(quantile(sortedOffsets, 0.9)) : null,
        },
        hyphenMissedQuick,
        hyphenWholeAtLine: await wholeAtLine(server.baseUrl, keyOf, ids, fixtures.documentQueries),
        aiQuestionsMissedAt5,
        quickLatencyMs: { p50: round(quantile(sortedMs, 0.5)), n: sortedMs.length },
        ingestion,
        toleranceS: SPEECH_TOLERANCE_S,
        fixedUserIds: fixedIds,
        tenantSpread,
        outcomes,
      };
    });
  });
}
