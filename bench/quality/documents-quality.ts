import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ROOT } from "../harness/paths.ts";
import { assertRunning } from "../harness/cleanup.ts";
import { createUserWithKey } from "../harness/deps.ts";
import { withServer, withTempDir } from "../harness/harness.ts";
import { pageLines } from "./quality-make.ts";
import { createUsersWithIds, searchJson, spread, uploadReady, type Mode } from "./quality.ts";
import { quantile, round } from "../harness/stats.ts";
import {
  DOCUMENT_QUALITY_KINDS,
  documentLineHit,
  documentLinesAway,
  samePage,
  type DocumentLocator,
  type DocumentQualityFixtures,
  type DocumentQualityKind,
  type DocumentQualityQuery,
} from "./documents-quality-truth.ts";

/**
 * Retrieval quality on real documents (`pnpm bench --only documents-quality`): where search results
 * land for line queries on the real office documents of bench/fixtures/documents and the real
 * text files of packages/text-reader/test/fixtures, whose truth was made apart from Locus
 * (bench/fixtures/documents/queries.json, made by documents-quality-make.ts). One user per kind
 * (writer, presentation, spreadsheet, text) on one all-in-one server; files are uploaded one at a
 * time in a fixed order, each waited for until ready, and searched one at a time in quick and ai
 * mode. Before any search, each office truth line is checked against the rendition the server
 * serves through the preview link (what it indexed), and every truth line against the passages the
 * server stored at that page and line: a locator bug shows there whatever the ranking does.
 */
export interface DocumentsQualityOptions {
  /** Results asked for per search (the API's default); "found" means within them. */
  limit: number;
  /** Longest wait for one file to be ready. */
  readyTimeoutMs: number;
  modes: Mode[];
}

export const DEFAULT_DOCUMENTS_QUALITY_OPTIONS: DocumentsQualityOptions = {
  limit: 50,
  readyTimeoutMs: 5 * 60_000,
  modes: ["quick", "ai"],
};

const QUERIES = join(ROOT, "bench", "fixtures", "documents", "queries.json");
const REQUEST_TIMEOUT_MS = 120_000;

/** Fixed user ids, for the reason quality.ts gives (the same code gives the same ranks). */
const USERS: Record<DocumentQualityKind, string> = {
  writer: "3d8a1f60-52c7-4e0b-9a14-6c2e7b9f0d11",
  presentation: "7b2e9c45-0f1a-4d63-8e57-1a9c3f6d2e12",
  spreadsheet: "b4c61e08-9d3f-47a2-b5e0-2f8d7a1c9e13",
  text: "e9f03a7d-6b18-4c55-a2d9-8e4b1c7f3a14",
};
const emailOf = (kind: DocumentQualityKind) => `documents-quality-${kind}@bench.invalid`;

export interface Spread {
  n: number;
  median: number | null;
  p90: number | null;
}

export interface DocumentsQualityRow {
  /** A kind, or a file. */
  group: string;
  mode: Mode;
  queries: number;
  hitAt1: number;
  hitAt5: number;
  mrr: number;
  found: number;
  /** Queries whose best-ranked result of the right file is on the truth's page (office). */
  pageExact: number;
  /** Best-ranked result of the right file and page: lines from the truth line. */
  away: Spread;
  /** Queries with no result of the right file and page at all. */
  noResultInPlace: number;
}

export interface DocumentsQualityOutcome {
  id: string;
  mode: Mode;
  q: string;
  rank: number | null;
  /** The best-ranked result of the right file: its locator, or null. */
  best: DocumentLocator | null;
  away: number | null;
}

export interface DocumentsQualityResult {
  material: string;
  libreOfficeVersion: string;
  files: {
    name: string;
    kind: DocumentQualityKind;
    format: string;
    pages: number | null;
    lines: number;
    queries: number;
    truth: string;
    /** Pages of the rendition the server serves (office), or null. */
    servedPages: number | null;
    passages: number;
    serverReadyMs: number;
  }[];
  /**
   * Office truth lines that the served rendition (pdftotext -layout of the preview link's PDF)
   * prints at the same page and line: the truth is about what was indexed.
   */
  renditionCheck: { lines: number; same: number; differing: string[] };
  /**
   * Truth lines that a stored passage holds at the truth's page and line (its line − passage line,
   * whitespace collapsed): Locus's locators agree with the independent truth.
   */
  locatorCheck: { kind: DocumentQualityKind; lines: number; atTheirLine: number; not: string[] }[];
  rows: DocumentsQualityRow[];
  byFile: DocumentsQualityRow[];
  outcomes: DocumentsQualityOutcome[];
  quickLatencyMs: { p50: number; n: number };
}

interface StoredPassage {
  content: string;
  locator: DocumentLocator;
}

async function getJson<T>(baseUrl: string, key: string, path: string): Promise<T> {
  const res = await fetch(`${baseUrl}${path}`, {
    headers: { Authorization: `Bearer ${key}` },
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  if (res.status !== 200)
    throw new Error(`GET ${path} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  return (await res.json()) as T;
}

async function filePassages(baseUrl: string, key: string, fileId: string): Promise<StoredPassage[]> {
  const all: StoredPassage[] = [];
  for (let offset: number | null = 0; offset !== null;) {
    const page: { passages: StoredPassage[]; next_offset: number | null } = await getJson(
      baseUrl,
      key,
      `/api/files/${fileId}/passages?offset=${offset}&limit=500`,
    );
    all.push(...page.passages);
    offset = page.next_offset;
  }
  return all;
}

/** The rendition's pages as pdftotext -layout prints them, read through the preview link. */
async function servedRendition(
  baseUrl: string,
  key: string,
  fileId: string,
  scratch: string,
): Promise<string[][]> {
  const link = await getJson<{ url: string; original_url?: string }>(
    baseUrl,
    key,
    `/api/files/${fileId}/preview-url`,
  );
  if (link.original_url === undefined)
    throw new Error(`preview of ${fileId} has no original_url: not a rendition`);
  const res = await fetch(link.url, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  if (res.status !== 200) throw new Error(`the rendition of ${fileId} answered ${res.status}`);
  const pdf = Buffer.from(await res.arrayBuffer());
  if (pdf.subarray(0, 5).toString("latin1") !== "%PDF-")
    throw new Error(`the rendition of ${fileId} is not a PDF`);
  const path = join(scratch, `${fileId}.pdf`);
  writeFileSync(path, pdf);
  return pageLines(path);
}

const collapse = (s: string) => s.replace(/\s+/g, " ").trim();

/** Whether a stored passage holds the truth line at the truth's page and line. */
function atItsLine(passages: readonly StoredPassage[], q: DocumentQualityQuery): boolean {
  return passages.some((p) => {
    const { line, line_end: end } = p.locator;
    if (!samePage(q, p.locator) || line === undefined || q.line < line || q.line > (end ?? line))
      return false;
    return collapse(p.content.split("\n")[q.line - line] ?? "") === collapse(q.text);
  });
}

interface Scored {
  kind: DocumentQualityKind;
  file: string;
  mode: Mode;
  rank: number | null;
  pageExact: boolean;
  away: number | null;
}

function rowsBy(scored: readonly Scored[], groupOf: (s: Scored) => string): DocumentsQualityRow[] {
  const groups = new Map<string, Scored[]>();
  for (const s of scored) {
    const k = `${groupOf(s)}\u0000${s.mode}`;
    groups.set(k, [...(groups.get(k) ?? []), s]);
  }
  return [...groups.values()].map((g) => {
    const placed = g.filter((s) => s.away !== null);
    return {
      group: groupOf(g[0]!),
      mode: g[0]!.mode,
      queries: g.length,
      hitAt1: g.filter((s) => s.rank === 1).length,
      hitAt5: g.filter((s) => s.rank !== null && s.rank <= 5).length,
      mrr: round(g.reduce((sum, s) => sum + (s.rank === null ? 0 : 1 / s.rank), 0) / g.length),
      found: g.filter((s) => s.rank !== null).length,
      pageExact: g.filter((s) => s.pageExact).length,
      away: spread(placed.map((s) => s.away!)),
      noResultInPlace: g.length - placed.length,
    };
  });
}

export function loadDocumentQueries(): DocumentQualityFixtures {
  return JSON.parse(readFileSync(QUERIES, "utf8")) as DocumentQualityFixtures;
}

export async function benchDocumentsQuality(
  options: DocumentsQualityOptions,
  log: (line: string) => void,
): Promise<DocumentsQualityResult> {
  const fixtures = loadDocumentQueries();
  return withTempDir("locus-bench-documents-quality-", async (dataDir) => {
    const fixedIds = await createUsersWithIds(
      dataDir,
      DOCUMENT_QUALITY_KINDS.map((kind) => ({ email: emailOf(kind), id: USERS[kind] })),
      (err) => log(`documents quality: could not fix the users' ids (${String(err)}); ranks may vary by run`),
    );
    if (!fixedIds) log("documents quality: the users' ids are random in this run");
    return withServer(dataDir, { LOCUS_RATE_LIMIT_ENTERPRISE: "100000" }, async (server) => {
      const keys = new Map<DocumentQualityKind, string>();
      for (const kind of DOCUMENT_QUALITY_KINDS)
        keys.set(kind, (await createUserWithKey(dataDir, { email: emailOf(kind), plan: "enterprise" })).key);
      const keyOf = (kind: DocumentQualityKind) => keys.get(kind)!;

      log(`documents quality: uploading ${fixtures.files.length} real documents, one at a time ...`);
      const ids = new Map<string, string>();
      const files: DocumentsQualityResult["files"] = [];
      const renditionCheck: DocumentsQualityResult["renditionCheck"] = { lines: 0, same: 0, differing: [] };
      const passagesOf = new Map<string, StoredPassage[]>();
      for (const f of fixtures.files) {
        assertRunning();
        const bytes = readFileSync(join(ROOT, f.path));
        const { id, run } = await uploadReady(
          server.baseUrl,
          keyOf(f.kind),
          bytes,
          f.name,
          options.readyTimeoutMs,
        );
        ids.set(f.name, id);
        const passages = await filePassages(server.baseUrl, keyOf(f.kind), id);
        passagesOf.set(f.name, passages);
        let servedPages: number | null = null;
        if (f.pages !== null) {
          const served = await servedRendition(server.baseUrl, keyOf(f.kind), id, dataDir);
          servedPages = served.length;
          for (const q of fixtures.queries.filter((x) => x.file === f.name)) {
            renditionCheck.lines++;
            const printed = served[(q.page ?? 1) - 1]?.[q.line - 1];
            if (printed !== undefined && collapse(printed) === collapse(q.text)) renditionCheck.same++;
            else
              renditionCheck.differing.push(
                `${q.id}: truth "${q.text}", served "${printed?.trim() ?? "(no such line)"}"`,
              );
          }
        }
        log(
          `documents quality: ${f.name} ready, ${run.passageCount} passages, ${run.pageCount} pages (${run.serverReadyMs} ms on the server)`,
        );
        files.push({
          name: f.name,
          kind: f.kind,
          format: f.format,
          pages: f.pages,
          lines: f.lines,
          queries: fixtures.queries.filter((q) => q.file === f.name).length,
          truth: f.truth,
          servedPages,
          passages: passages.length,
          serverReadyMs: run.serverReadyMs,
        });
      }

      const locatorCheck = DOCUMENT_QUALITY_KINDS.map((kind) => {
        const mine = fixtures.queries.filter((q) => q.kind === kind);
        const not = mine.filter((q) => !atItsLine(passagesOf.get(q.file) ?? [], q));
        return {
          kind,
          lines: mine.length,
          atTheirLine: mine.length - not.length,
          not: not.map((q) => `${q.id} "${q.text}"`),
        };
      });

      const scored: Scored[] = [];
      const outcomes: DocumentsQualityOutcome[] = [];
      const quickMs: number[] = [];
      for (const mode of options.modes) {
        log(`documents quality: ${fixtures.queries.length} queries, ${mode} mode ...`);
        for (const q of fixtures.queries) {
          assertRunning();
          const fileId = ids.get(q.file)!;
          const { body, ms } = await searchJson<{ results: { file_id: string; locator: DocumentLocator }[] }>(
            server.baseUrl,
            keyOf(q.kind),
            q.q,
            mode,
            options.limit,
          );
          if (mode === "quick") quickMs.push(ms);
          const index = body.results.findIndex((r) => r.file_id === fileId && documentLineHit(q, r.locator));
          const rank = index < 0 ? null : index + 1;
          const bestOfFile = body.results.find((r) => r.file_id === fileId)?.locator ?? null;
          const bestInPlace = body.results.find(
            (r) => r.file_id === fileId && samePage(q, r.locator),
          )?.locator;
          const away = bestInPlace === undefined ? null : documentLinesAway(q, bestInPlace);
          scored.push({
            kind: q.kind,
            file: q.file,
            mode,
            rank,
            pageExact: bestOfFile !== null && samePage(q, bestOfFile),
            away,
          });
          outcomes.push({ id: q.id, mode, q: q.q, rank, best: bestOfFile, away });
        }
      }
      const rows = rowsBy(scored, (s) => s.kind);
      for (const r of rows)
        log(
          `documents quality: ${r.group} ${r.mode}: hit@1 ${r.hitAt1}/${r.queries}, hit@5 ${r.hitAt5}/${r.queries}`,
        );
      const sortedMs = [...quickMs].sort((a, b) => a - b);
      return {
        material:
          "Real documents from Debian packages, none written for Locus: 8 office documents (bench/fixtures/documents) and 6 text files " +
          "(packages/text-reader/test/fixtures: a README, two Markdown READMEs, three HTML pages)",
        libreOfficeVersion: fixtures.libreOfficeVersion,
        files,
        renditionCheck,
        locatorCheck,
        rows,
        byFile: rowsBy(scored, (s) => s.file),
        outcomes,
        quickLatencyMs: { p50: round(quantile(sortedMs, 0.5)), n: sortedMs.length },
      };
    });
  });
}

/** For a quick look without the report: `node --import tsx bench/quality/documents-quality.ts`. */
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const result = await benchDocumentsQuality(DEFAULT_DOCUMENTS_QUALITY_OPTIONS, (line) => console.log(line));
  console.log(JSON.stringify({ ...result, outcomes: undefined }, null, 2));
}
