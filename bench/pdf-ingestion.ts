import { buildVocabulary, proseLine, rng, type Vocabulary } from "./corpus.ts";
import { client, createUserWithKey, makePdf, type Client } from "./deps.ts";
import { track } from "./cleanup.ts";
import { since, sleep, withServer, withTempDir } from "./harness.ts";
import { median, round } from "./stats.ts";

export interface PdfBenchOptions {
  smallPages: number;
  smallRuns: number;
  largePages: number;
  largeRuns: number;
  /** Fresh server starts, each given one small PDF as soon as it listens. */
  freshStarts: number;
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
}

export interface FileBody {
  id: string;
  status: string;
  page_count: number | null;
  passage_count: number | null;
  created_at: string;
  updated_at: string;
  error: { code: string; message: string } | null;
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
  return {
    bytes: pdf.length,
    uploadMs: round(uploadMs),
    readyMs: round(since(answered)),
    serverReadyMs: Date.parse(ready.updated_at) - Date.parse(ready.created_at),
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
  return withTempDir("locus-bench-pdf-", async (dataDir) => {
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
}
