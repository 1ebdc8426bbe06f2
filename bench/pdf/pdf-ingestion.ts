import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { findPoppler } from "@locus/pdf-reader";
import { FIXTURES_DIR } from "../harness/paths.ts";
import { buildVocabulary, proseLine, rng, type Vocabulary } from "../corpus/corpus.ts";
import { client, createUserWithKey, makePdf, type Client } from "../harness/deps.ts";
import { track } from "../harness/cleanup.ts";
import { since, sleep, withServer, withTempDir } from "../harness/harness.ts";
import { median, round } from "../harness/stats.ts";

export interface PdfBenchOptions {
  smallPages: number;
  smallRuns: number;
  largePages: number;
  largeRuns: number;
  /** Fresh server starts, each given one small PDF as soon as it listens. */
  freshStarts: number;
  /** Rounds over the real manuals, per engine. */
  manualRuns: number;
  linesPerPage: number;
  /** Longest wait for one file to be ready; beyond it the benchmark fails. */
  readyTimeoutMs: number;
}

export const DEFAULT_PDF_OPTIONS: PdfBenchOptions = {
  smallPages: 15,
  smallRuns: 5,
  largePages: 300,
  largeRuns: 3,
  freshStarts: 3,
  manualRuns: 3,
  linesPerPage: 30,
  readyTimeoutMs: 120_000,
};

export interface PdfRun {
  bytes: number;
  /** The upload request, from sending to the response. */
  uploadMs: number;
  /** From the upload response to the first poll that saw `ready` (polling every pollMs). */
  readyMs: number;
  /** The server's own clock: the ready record's updated_at minus its created_at. */
  serverReadyMs: number;
  /**
   * Where the meaning stage runs (LOCUS_EMBEDDER=encoder), the same once its passages have their
   * vectors too (`ai_vectors: ready`): ready for ai search's meaning matching, not only keywords.
   */
  serverAiReadyMs?: number;
  pageCount: number;
  passageCount: number;
}

export interface PdfSeriesResult {
  pages: number;
  linesPerPage: number;
  runs: PdfRun[];
  pollMs: number;
  medianUploadMs: number;
  medianReadyMs: number;
  medianServerReadyMs: number;
  /** pages / readyMs, median over runs. */
  medianPagesPerSecond: number;
  /** pages / serverReadyMs, median over runs: the same without the polling granularity. */
  medianServerPagesPerSecond: number;
}

export interface PdfBenchResult {
  small: PdfSeriesResult;
  large: PdfSeriesResult;
  /**
   * A small PDF uploaded as soon as a freshly started server listens, one fresh start per run
   * (the same data directory each time): what the first user after a deploy or a restart sees.
   * Absent from reports made before it was measured.
   */
  firstAfterStart?: PdfSeriesResult;
  /** Real manuals against pdftotext in the same run; absent where it is not installed, and from older reports. */
  realManuals?: RealManualsResult;
}

export interface FileBody {
  id: string;
  status: string;
  page_count: number | null;
  passage_count: number | null;
  created_at: string;
  updated_at: string;
  error: { code: string; message: string } | null;
  ai_vectors?: "pending" | "ready";
}

/** A document of `pages` pages of `lines` lines of prose (about 70 characters each). */
export function documentPages(vocab: Vocabulary, seed: number, pages: number, lines: number): string[][] {
  const random = rng(seed);
  return Array.from({ length: pages }, () =>
    Array.from({ length: lines }, () => proseLine(vocab, random, 62 + Math.floor(random() * 16))),
  );
}

async function pollReady(c: Client, fileId: string, pollMs: number, timeoutMs: number): Promise<FileBody> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const res = await c.get(`/api/files/${fileId}`);
    const text = await res.text();
    if (res.status !== 200)
      throw new Error(`GET /api/files/${fileId} answered ${res.status}: ${text.slice(0, 300)}`);
    const body = JSON.parse(text) as FileBody;
    if (body.status === "ready") return body;
    if (body.status === "failed")
      throw new Error(`file ${fileId} failed: ${body.error?.code}: ${body.error?.message}`);
    if (performance.now() > deadline)
      throw new Error(`file ${fileId} still ${body.status} after ${timeoutMs} ms`);
    await sleep(pollMs);
  }
}

/** The ready file once its passages have their vectors (`ai_vectors: ready`). */
async function pollAiReady(c: Client, ready: FileBody, pollMs: number, timeoutMs: number): Promise<FileBody> {
  const deadline = performance.now() + timeoutMs;
  for (let body = ready; ;) {
    if (body.ai_vectors !== "pending") return body;
    if (performance.now() > deadline)
      throw new Error(`file ${ready.id} still has ai_vectors pending after ${timeoutMs} ms`);
    await sleep(pollMs);
    const res = await c.get(`/api/files/${ready.id}`);
    const text = await res.text();
    if (res.status !== 200)
      throw new Error(`GET /api/files/${ready.id} answered ${res.status}: ${text.slice(0, 300)}`);
    body = JSON.parse(text) as FileBody;
  }
}

export async function ingest(
  c: Client,
  pdf: Buffer,
  name: string,
  pollMs: number,
  timeoutMs: number,
): Promise<PdfRun> {
  const started = performance.now();
  const res = await c.upload(pdf, name);
  const text = await res.text();
  const uploadMs = since(started);
  if (res.status !== 200) throw new Error(`upload of ${name} answered ${res.status}: ${text.slice(0, 300)}`);
  const uploaded = (JSON.parse(text) as { file: FileBody }).file;
  const answered = performance.now();
  const ready = await pollReady(c, uploaded.id, pollMs, timeoutMs);
  const serverMs = (body: FileBody) => Date.parse(body.updated_at) - Date.parse(body.created_at);
  // With the meaning stage the record changes again when its passages have their vectors: waited
  // for, so that searches measure ai mode as it stands once a file is fully in. (Seen with its
  // vectors already at the first poll, its keyword-ready time is that too: an upper bound.)
  const aiReady = ready.ai_vectors === undefined ? undefined : await pollAiReady(c, ready, pollMs, timeoutMs);
  return {
    bytes: pdf.length,
    uploadMs: round(uploadMs),
    readyMs: round(since(answered)),
    serverReadyMs: serverMs(ready),
    ...(aiReady ? { serverAiReadyMs: serverMs(aiReady) } : {}),
    pageCount: ready.page_count ?? 0,
    passageCount: ready.passage_count ?? 0,
  };
}

async function series(
  c: Client,
  pdfs: Buffer[],
  pages: number,
  linesPerPage: number,
  pollMs: number,
  options: PdfBenchOptions,
  log: (line: string) => void,
): Promise<PdfSeriesResult> {
  const runs: PdfRun[] = [];
  for (const [i, pdf] of pdfs.entries()) {
    const run = await ingest(c, pdf, `bench-${pages}p-${i + 1}.pdf`, pollMs, options.readyTimeoutMs);
    if (run.pageCount !== pages) throw new Error(`a ${pages}-page PDF was indexed as ${run.pageCount} pages`);
    if (run.passageCount === 0) throw new Error(`a ${pages}-page PDF was indexed with no passages`);
    log(
      `pdf ${pages} pages, run ${i + 1}/${pdfs.length}: ready ${run.readyMs} ms after the upload response (server: ${run.serverReadyMs} ms)`,
    );
    runs.push(run);
  }
  return seriesResult(runs, pages, linesPerPage, pollMs);
}

function seriesResult(runs: PdfRun[], pages: number, linesPerPage: number, pollMs: number): PdfSeriesResult {
  return {
    pages,
    linesPerPage,
    runs,
    pollMs,
    medianUploadMs: round(median(runs.map((r) => r.uploadMs))),
    medianReadyMs: round(median(runs.map((r) => r.readyMs))),
    medianServerReadyMs: round(median(runs.map((r) => r.serverReadyMs))),
    medianPagesPerSecond: round(median(runs.map((r) => pages / (r.readyMs / 1000)))),
    medianServerPagesPerSecond: round(median(runs.map((r) => pages / (r.serverReadyMs / 1000)))),
  };
}

export async function benchPdfIngestion(
  options: PdfBenchOptions,
  log: (line: string) => void,
): Promise<PdfBenchResult> {
  const vocab = buildVocabulary(5_000);
  const { smallPages, largePages, linesPerPage: lines } = options;
  log("pdf: generating PDFs ...");
  // Every run uploads a different file; all are made before the clock starts, since the
  // generator would compete with the server for the two cores.
  const warmup = await makePdf({ pages: documentPages(vocab, 900, 3, lines) });
  const small = await Promise.all(
    Array.from({ length: options.smallRuns }, (_, i) =>
      makePdf({ pages: documentPages(vocab, 100 + i, smallPages, lines) }),
    ),
  );
  const large: Buffer[] = [];
  for (let i = 0; i < options.largeRuns; i++)
    large.push(await makePdf({ pages: documentPages(vocab, 200 + i, largePages, lines) }));

  const env = { LOCUS_RATE_LIMIT_PRO: "100000", LOCUS_RATE_LIMIT_ENTERPRISE: "100000" };
  const generated = await withTempDir("locus-bench-pdf-", async (dataDir) => {
    const { key } = await track(createUserWithKey(dataDir, { plan: "pro" }));
    const warm = await withServer(dataDir, env, async (server) => {
      const c = client(server.baseUrl, key);
      // One small file first, not measured: warms the JIT as a running server would be.
      await ingest(c, warmup, "warmup.pdf", 50, options.readyTimeoutMs);
      return {
        small: await series(c, small, smallPages, lines, 50, options, log),
        large: await series(c, large, largePages, lines, 100, options, log),
      };
    });
    // The same small files again, each on a server started for it: the user and key exist
    // already, so the upload goes out as soon as the server listens.
    const firstAfterStart: PdfRun[] = [];
    for (const [i, pdf] of small.slice(0, options.freshStarts).entries()) {
      const run = await withServer(dataDir, env, (server) =>
        ingest(client(server.baseUrl, key), pdf, `fresh-start-${i + 1}.pdf`, 20, options.readyTimeoutMs),
      );
      log(`pdf ${smallPages} pages, fresh start ${i + 1}/${options.freshStarts}: ready ${run.readyMs} ms`);
      firstAfterStart.push(run);
    }
    return { ...warm, firstAfterStart: seriesResult(firstAfterStart, smallPages, lines, 20) };
  });
  // Both engines where Poppler's tools are installed (the server's default then), else pdf.js.
  const engines: PdfEngine[] = findPoppler() ? ["poppler", "pdfjs"] : ["pdfjs"];
  const realManuals = await benchRealManuals(engines, options.manualRuns, options, log);
  return { ...generated, ...(realManuals ? { realManuals } : {}) };
}

/** What reads the text layers of the server measured: Poppler's tools, or pdf.js alone. */
export type PdfEngine = "poppler" | "pdfjs";

export interface RealManualResult {
  name: string;
  pages: number;
  bytes: number;
  passages: number;
  /** `pdftotext FILE /dev/null`, one run before each upload, median. */
  pdftotextMs: number;
  /** Upload to `ready` on the server's clock, median, per engine measured. */
  serverReadyMs: Partial<Record<PdfEngine, number>>;
}

export interface RealManualsResult {
  /** The native tool's command, as anyone can run it again. */
  command: string;
  pdftotextVersion: string;
  runs: number;
  manuals: RealManualResult[];
  /** Every manual's pages over the sum of its medians. */
  total: {
    pages: number;
    pdftotextPagesPerSecond: number;
    pagesPerSecond: Partial<Record<PdfEngine, number>>;
    /** Locus's pages/s over pdftotext's: the goal is ≥ 0.5 with Poppler. */
    ratio: Partial<Record<PdfEngine, number>>;
  };
}

/**
 * Real manuals from Debian packages, none written for Locus: two kept for this benchmark
 * (bench/fixtures/manuals, gzipped as Debian ships them) and the quality set's three.
 */
const MANUALS: { name: string; path: string }[] = [
  { name: "valgrind_manual.pdf", path: "manuals/valgrind_manual.pdf.gz" },
  { name: "nettle.pdf", path: "manuals/nettle.pdf.gz" },
  { name: "libtasn1.pdf", path: "quality/libtasn1.pdf" },
  { name: "flite.pdf", path: "quality/flite.pdf" },
  { name: "fontconfig-user.pdf", path: "quality/fontconfig-user.pdf" },
];

const FIXTURES = FIXTURES_DIR;

/** Milliseconds `pdftotext file /dev/null` takes, the process's start and end included. */
function timePdftotext(file: string): number {
  const started = performance.now();
  execFileSync("pdftotext", [file, "/dev/null"], { stdio: "ignore" });
  return since(started);
}

/**
 * The real manuals uploaded one at a time to a warm server reading with each engine, against
 * `pdftotext` reading the same file just before each upload, in the same run: the ratio survives a
 * noisy machine where the absolute figures do not. Undefined when pdftotext is not installed.
 */
export async function benchRealManuals(
  engines: readonly PdfEngine[],
  runs: number,
  options: PdfBenchOptions,
  log: (line: string) => void,
): Promise<RealManualsResult | undefined> {
  let pdftotextVersion: string;
  try {
    const said = spawnSync("pdftotext", ["-v"], { encoding: "utf8" });
    pdftotextVersion = /pdftotext version (\S+)/.exec(`${said.stderr}${said.stdout}`)?.[1] ?? "";
    if (!pdftotextVersion) throw new Error(said.error?.message ?? "no version");
  } catch (err) {
    log(
      `pdf: pdftotext is not installed (${(err as Error).message}); the real-manuals comparison is not measured`,
    );
    return undefined;
  }
  return withTempDir("locus-bench-manuals-", async (dataDir) => {
    const manuals = MANUALS.map(({ name, path }) => {
      const raw = readFileSync(join(FIXTURES, path));
      const data = path.endsWith(".gz") ? gunzipSync(raw) : raw;
      const file = join(dataDir, name);
      writeFileSync(file, data);
      return { name, data, file };
    });
    const { key } = await track(createUserWithKey(dataDir, { plan: "pro" }));
    const env = { LOCUS_RATE_LIMIT_PRO: "100000" };
    const pdftotextMs = new Map<string, number[]>();
    const readyMs = new Map<string, number[]>();
    const counts = new Map<string, { pages: number; passages: number }>();
    for (const engine of engines) {
      await withServer(dataDir, { ...env, LOCUS_PDF_ENGINE: engine }, async (server) => {
        const c = client(server.baseUrl, key);
        // The smallest manual first, not measured: warms the JIT as a running server would be.
        const warmup = manuals.at(-1);
        if (warmup) await ingest(c, warmup.data, `warmup-${engine}.pdf`, 20, options.readyTimeoutMs);
        for (let r = 1; r <= runs; r++) {
          for (const { name, data, file } of manuals) {
            const nativeMs = timePdftotext(file);
            const run = await ingest(c, data, `${engine}-${r}-${name}`, 20, options.readyTimeoutMs);
            pdftotextMs.set(name, [...(pdftotextMs.get(name) ?? []), nativeMs]);
            readyMs.set(`${engine} ${name}`, [
              ...(readyMs.get(`${engine} ${name}`) ?? []),
              run.serverReadyMs,
            ]);
            counts.set(name, { pages: run.pageCount, passages: run.passageCount });
            log(
              `pdf manuals, ${engine}, run ${r}/${runs}: ${name} ${run.pageCount} pages ready in ${run.serverReadyMs} ms (pdftotext ${Math.round(nativeMs)} ms)`,
            );
          }
        }
      });
    }
    const results: RealManualResult[] = manuals.map(({ name, data }) => ({
      name,
      pages: counts.get(name)?.pages ?? 0,
      bytes: data.length,
      passages: counts.get(name)?.passages ?? 0,
      pdftotextMs: round(median(pdftotextMs.get(name) ?? [])),
      serverReadyMs: Object.fromEntries(
        engines.map((engine) => [engine, round(median(readyMs.get(`${engine} ${name}`) ?? []))]),
      ),
    }));
    const pages = results.reduce((sum, m) => sum + m.pages, 0);
    const nativeSeconds = results.reduce((sum, m) => sum + m.pdftotextMs, 0) / 1000;
    const engineSeconds = (engine: PdfEngine) =>
      results.reduce((sum, m) => sum + (m.serverReadyMs[engine] ?? 0), 0) / 1000;
    return {
      command: "pdftotext FILE /dev/null",
      pdftotextVersion,
      runs,
      manuals: results,
      total: {
        pages,
        pdftotextPagesPerSecond: round(pages / nativeSeconds),
        pagesPerSecond: Object.fromEntries(engines.map((e) => [e, round(pages / engineSeconds(e))])),
        ratio: Object.fromEntries(engines.map((e) => [e, round2(nativeSeconds / engineSeconds(e))])),
      },
    };
  });
}

const round2 = (value: number) => Math.round(value * 100) / 100;
