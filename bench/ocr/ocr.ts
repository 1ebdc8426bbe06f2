import { spawnSync } from "node:child_process";
import { availableParallelism } from "node:os";
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { FIXTURES_DIR } from "../harness/paths.ts";
import { buildVocabulary, rng } from "../corpus/corpus.ts";
import {
  client,
  createOcrEngine,
  createUserWithKey,
  extractImage,
  findTesseract,
  makeScannedPdf,
  makeTextImage,
  openImage,
  type Client,
  type OcrEngine,
  type OcrEngineKind,
  type TextImageSpec,
} from "../harness/deps.ts";
import { since, sleep, withServer, withTempDir } from "../harness/harness.ts";
import { benchOcrRealPages, type RealPagesResult } from "./ocr-real-pages.ts";
import { tokens, wordsRead, wordsRight, type WordsRead } from "./ocr-words.ts";
import { ingest } from "../pdf/pdf-ingestion.ts";
import { median, round } from "../harness/stats.ts";

/**
 * OCR figures: throughput of the OCR library on 150-dpi page scans (the recognisers the image
 * extractor runs, without the server around them), word accuracy on images of known text with each
 * engine, a scanned PDF through the running server (drawing pages with pdf.js, then OCR), and the
 * real page images of bench/fixtures/quality through the server with each engine, side by side
 * with the `tesseract` command reading the same images in the same run.
 */
export interface OcrBenchOptions {
  /** Pages per throughput round; read `workers` at a time, as the image extractor does. */
  pages: number;
  rounds: number;
  linesPerPage: number;
  workers: number;
  /** Pages of the scanned PDF sent through the server. */
  scannedPdfPages: number;
  /** Measured batches of the real page images per engine, after the first (cold) one. */
  realImageRounds: number;
}

export const DEFAULT_OCR_OPTIONS: OcrBenchOptions = {
  pages: 6,
  rounds: 3,
  linesPerPage: 30,
  workers: 2,
  scannedPdfPages: 6,
  realImageRounds: 2,
};

export interface AccuracyResult {
  /** The engine that read (absent in reports from before there were two: tesseract.js). */
  engine?: OcrEngineKind;
  variant: string;
  words: number;
  correct: number;
  /** correct / words. */
  accuracy: number;
  ms: number;
}

export interface OcrBenchResult {
  throughput: {
    /** The engine measured: the one the server chooses by default (absent in older reports: tesseract.js). */
    engine?: string;
    pages: number;
    linesPerPage: number;
    workers: number;
    /** The first page on a cold engine: recogniser start-up (model loading) plus one page. */
    coldFirstPageMs: number;
    rounds: { ms: number; pagesPerSecond: number }[];
    medianPagesPerSecond: number;
  };
  /** Each engine's words right: the default engine's first, so `accuracy[0]` is its clean page. */
  accuracy: AccuracyResult[];
  scannedPdf: { pages: number; serverReadyMs: number; pagesPerSecond: number; passages: number };
  /** Real page images through the server, against the tesseract command (absent in older reports). */
  realImages?: RealImagesResult;
  /** Real manual pages drawn at three resolutions, read with each model (absent in older reports). */
  realPages?: RealPagesResult;
}

export interface RealImagesResult {
  images: { name: string; bytes: number; width: number; height: number; source: string }[];
  /** Images read at once: the machine's cores, the server's LOCUS_OCR_WORKERS and xargs -P alike. */
  cores: number;
  /** Measured batches per engine, after the first on a freshly started server (cold). */
  rounds: number;
  /** Where the truth comes from: \`pdftotext -layout\` of each image's PDF page; null without poppler-utils. */
  truth: string | null;
  tesseract: {
    version: string;
    /** Copies the images where the commands below read them, as anyone can run it again. */
    setup: string;
    /** The command as Debian installs it, and the same with one thread per process. */
    commands: { plain: string; oneThread: string };
    /** Wall time of each batch: one-thread just before each measured Locus batch, plain once per engine. */
    oneThreadMs: number[];
    plainMs: number[];
    medianOneThreadMs: number;
    medianPlainMs: number;
    words: WordsRead | null;
  } | null;
  engines: RealImagesEngine[];
}

export interface RealImagesEngine {
  engine: OcrEngineKind;
  /** What the server said it reads images with. */
  description: string;
  /** The first batch on the freshly started server: recognisers started on the way. */
  coldMs: number;
  /** The measured batches: uploading every image at once, until the last is `ready` (server clock). */
  roundsMs: number[];
  /** The same batches on the client's clock (first upload sent to the last `ready` seen). */
  roundsClientMs?: number[];
  medianMs: number;
  passages: number;
  words: WordsRead | null;
  /** The tesseract command's median time over Locus's: ≥ 0.8 is the goal. */
  ratio: { oneThread: number; plain: number } | null;
}

/** A4 at 150 dpi, 11 pt text: what an office scanner's default setting gives. */
const PAGE_150_DPI = { width: 1240, height: 1754, fontPx: 23 } as const;

/** Lines of real English words (so a dictionary-aided recogniser meets words it could know). */
function englishLines(seed: number, count: number, chars = 60): string[] {
  const words = buildVocabulary(300).words.slice(0, 300);
  const random = rng(seed);
  return Array.from({ length: count }, () => {
    let line = "";
    let sentenceStart = true;
    while (line.length < chars) {
      let w = words[Math.floor(random() * words.length)]!;
      if (sentenceStart) w = w[0]!.toUpperCase() + w.slice(1);
      sentenceStart = random() < 0.12;
      line += (line ? " " : "") + w + (sentenceStart ? "." : random() < 0.06 ? "," : "");
    }
    return line;
  });
}

async function readAll(data: Buffer, engine: OcrEngine): Promise<string> {
  const parts: string[] = [];
  for await (const passage of extractImage(data, engine)) parts.push(passage.content);
  // Passages overlap by a line; for scoring, keep each line once.
  return dedupeOverlaps(parts);
}

function dedupeOverlaps(parts: readonly string[]): string {
  const lines: string[] = [];
  for (const part of parts) {
    const next = part.split("\n");
    if (lines.length > 0 && lines.at(-1) === next[0]) next.shift();
    lines.push(...next);
  }
  return lines.join("\n");
}

async function limited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

/** Which engines can run here: tesseract.js always, the tesseract command when it works. */
function availableEngines(log: (line: string) => void): OcrEngineKind[] {
  try {
    findTesseract();
    return ["native", "wasm"];
  } catch (err) {
    log(`ocr: the native engine is not measured: ${(err as Error).message}`);
    return ["wasm"];
  }
}

export async function benchOcr(
  options: OcrBenchOptions,
  log: (line: string) => void,
): Promise<OcrBenchResult> {
  const engines = availableEngines(log);
  // Throughput with the engine the server chooses by default (auto: the tesseract command when it works).
  const engine = createOcrEngine({ languages: ["eng"], workers: options.workers, engine: engines[0] });
  let throughput: OcrBenchResult["throughput"];
  try {
    const scans = await Promise.all(
      Array.from({ length: options.pages }, (_, i) =>
        makeTextImage({
          lines: englishLines(100 + i, options.linesPerPage),
          ...PAGE_150_DPI,
          noise: 20,
          format: "jpeg",
          quality: 80,
        }),
      ),
    );
    let started = performance.now();
    await readAll(scans[0]!.data, engine);
    const coldFirstPageMs = round(since(started));
    log(`ocr: ${engine.description}: first page on a cold engine ${coldFirstPageMs} ms`);
    // Start every recogniser before timing, as a running extractor has.
    await Promise.all(scans.slice(0, options.workers).map((s) => readAll(s.data, engine)));
    const rounds: { ms: number; pagesPerSecond: number }[] = [];
    for (let r = 0; r < options.rounds; r++) {
      started = performance.now();
      await limited(scans, options.workers, async (s) => {
        await readAll(s.data, engine);
      });
      const ms = since(started);
      rounds.push({ ms: round(ms), pagesPerSecond: round((options.pages / ms) * 1000) });
      log(`ocr: round ${r + 1}/${options.rounds}: ${options.pages} pages in ${round(ms)} ms`);
    }
    throughput = {
      engine: engine.description,
      pages: options.pages,
      linesPerPage: options.linesPerPage,
      workers: options.workers,
      coldFirstPageMs,
      rounds,
      medianPagesPerSecond: round(median(rounds.map((r) => r.pagesPerSecond))),
    };
  } finally {
    await engine.close();
  }

  const variants: [string, TextImageSpec][] = [
    ["clean 150-dpi page (PNG)", { lines: englishLines(7, options.linesPerPage), ...PAGE_150_DPI }],
    [
      "150-dpi scan: grey noise ±30, JPEG q75",
      {
        lines: englishLines(8, options.linesPerPage),
        ...PAGE_150_DPI,
        noise: 30,
        format: "jpeg",
        quality: 75,
      },
    ],
    [
      "phone photo: turned 2°, noise ±30, JPEG q75",
      {
        lines: englishLines(9, options.linesPerPage),
        ...PAGE_150_DPI,
        rotateDeg: 2,
        noise: 30,
        format: "jpeg",
        quality: 75,
      },
    ],
    ["screenshot: 13 px text (PNG)", { lines: englishLines(10, 20, 70), width: 900, fontPx: 13 }],
  ];
  const images = await Promise.all(variants.map(([, spec]) => makeTextImage(spec)));
  const accuracy: AccuracyResult[] = [];
  for (const kind of engines) {
    const reader = createOcrEngine({ languages: ["eng"], workers: options.workers, engine: kind });
    try {
      for (const [i, [variant, spec]] of variants.entries()) {
        const t = performance.now();
        const read = await readAll(images[i]!.data, reader);
        const expected = spec.lines.join("\n");
        const words = tokens(expected).length;
        const correct = wordsRight(expected, read);
        accuracy.push({
          engine: kind,
          variant,
          words,
          correct,
          accuracy: Math.round((correct / words) * 10_000) / 10_000,
          ms: round(since(t)),
        });
        log(`ocr: ${kind}, ${variant}: ${correct}/${words} words right`);
      }
    } finally {
      await reader.close();
    }
  }

  const scannedPdf = await withTempDir("locus-bench-ocr-", (dir) =>
    withServer(dir, { LOCUS_OCR_WORKERS: String(options.workers) }, async (server) => {
      const { key } = await createUserWithKey(server.dataDir, { plan: "pro" });
      const c = client(server.baseUrl, key);
      const pages = Array.from({ length: options.scannedPdfPages }, (_, i) =>
        englishLines(200 + i, options.linesPerPage),
      );
      const pdf = await makeScannedPdf(pages);
      // The first scanned page of a server starts its recognisers; count it outside the figure.
      await ingest(c, await makeScannedPdf([pages[0]!]), "warm-up.pdf", 100, 120_000);
      const run = await ingest(c, pdf, "scan.pdf", 100, 600_000);
      log(`ocr: scanned PDF of ${run.pageCount} pages ready in ${run.serverReadyMs} ms (server clock)`);
      return {
        pages: run.pageCount,
        serverReadyMs: run.serverReadyMs,
        pagesPerSecond: round((run.pageCount / run.serverReadyMs) * 1000),
        passages: run.passageCount,
      };
    }),
  );

  const realImages = await benchRealImages(engines, options.realImageRounds, log);
  const realPages = await benchOcrRealPages(engines[0]!, options.workers, log);
  return { throughput, accuracy, scannedPdf, realImages, ...(realPages ? { realPages } : {}) };
}

const QUALITY_FIXTURES = join(FIXTURES_DIR, "quality");

/** The real page images of the quality set: pages of manuals from Debian packages (its README says which). */
const REAL_IMAGES = ["fontconfig-user-page.png", "libtasn1-page-photo.jpg", "flite-page.png"];

/** What a page image was made from, as the quality set's queries.json records it. */
interface DerivedFrom {
  file: string;
  page: number;
  how: string;
}

/** The page's text as `pdftotext -layout` prints it; null when poppler-utils is not installed. */
function pdfPageText(pdf: string, page: number): string | null {
  const said = spawnSync("pdftotext", ["-layout", "-f", String(page), "-l", String(page), pdf, "-"], {
    encoding: "utf8",
  });
  return said.status === 0 ? said.stdout : null;
}

/** Runs a shell command in `dir` and returns its wall time; throws when it fails. */
function timeCommand(command: string, dir: string): number {
  const started = performance.now();
  const said = spawnSync("sh", ["-c", command], { cwd: dir, encoding: "utf8" });
  const ms = since(started);
  if (said.status !== 0) {
    throw new Error(`\`${command}\` failed (${said.status ?? said.signal}): ${said.stderr.slice(-500)}`);
  }
  return ms;
}

interface FileBody {
  id: string;
  status: string;
  passage_count: number | null;
  error: { code: string; message: string } | null;
  created_at: string;
  updated_at: string;
}

/**
 * How often a file's state is asked for. Each answer costs the server CPU its recognisers would
 * use on two cores: every 20 ms for three files was ~150 requests a second. The batch's time is
 * taken from the server's own clock (uploadAll), so a slower poll does not round it up.
 */
const POLL_MS = 100;

/** Polls a file until it is ready; throws when it failed or took longer than `timeoutMs`. */
async function untilReady(c: Client, id: string, timeoutMs: number): Promise<FileBody> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const res = await c.get(`/api/files/${id}`);
    const body = (await res.json()) as FileBody;
    if (res.status !== 200) throw new Error(`GET /api/files/${id} answered ${res.status}`);
    if (body.status === "ready") return body;
    if (body.status === "failed")
      throw new Error(`file ${id} failed: ${body.error?.code}: ${body.error?.message}`);
    if (performance.now() > deadline)
      throw new Error(`file ${id} still ${body.status} after ${timeoutMs} ms`);
    await sleep(POLL_MS);
  }
}

/** Every passage's content of a ready file, in order. */
async function passagesOf(c: Client, id: string): Promise<string[]> {
  const contents: string[] = [];
  for (let offset: number | null = 0; offset !== null;) {
    const res = await c.get(`/api/files/${id}/passages?offset=${offset}&limit=500`);
    if (res.status !== 200) throw new Error(`GET /api/files/${id}/passages answered ${res.status}`);
    const body = (await res.json()) as { passages: { content: string }[]; next_offset: number | null };
    contents.push(...body.passages.map((p) => p.content));
    offset = body.next_offset;
  }
  return contents;
}

/**
 * Uploads every image at once and waits until the last is ready: the time on the server's clock
 * (the first record's created_at to the last one's updated_at, when it became ready) and on the
 * client's (first upload sent to the last ready seen), and each image's passages.
 */
async function uploadAll(
  c: Client,
  images: readonly { name: string; data: Buffer }[],
  tag: string,
): Promise<{ ms: number; clientMs: number; texts: string[]; passages: number }> {
  const started = performance.now();
  const files = await Promise.all(
    images.map(async ({ name, data }) => {
      const res = await c.upload(data, `${tag}-${name}`);
      const text = await res.text();
      if (res.status !== 200)
        throw new Error(`upload of ${name} answered ${res.status}: ${text.slice(0, 300)}`);
      const { id } = (JSON.parse(text) as { file: { id: string } }).file;
      return untilReady(c, id, 300_000);
    }),
  );
  const clientMs = since(started);
  const ms =
    Math.max(...files.map((f) => Date.parse(f.updated_at))) -
    Math.min(...files.map((f) => Date.parse(f.created_at)));
  const texts = await Promise.all(files.map(async (f) => dedupeOverlaps(await passagesOf(c, f.id))));
  return { ms, clientMs, texts, passages: files.reduce((sum, f) => sum + (f.passage_count ?? 0), 0) };
}

const sumWords = (all: readonly WordsRead[]): WordsRead => ({
  words: all.reduce((s, w) => s + w.words, 0),
  inOrder: all.reduce((s, w) => s + w.inOrder, 0),
  anyOrder: all.reduce((s, w) => s + w.anyOrder, 0),
});

/**
 * The real page images uploaded at once to a freshly started server reading with each engine
 * (LOCUS_OCR_ENGINE), upload to the last `ready`; just before each measured batch the `tesseract`
 * command reads the same images, one process per core, in the same run: the ratio survives a noisy
 * machine where the absolute figures do not. The command as Debian installs it runs with OpenMP,
 * a thread per core in every process; the same with one thread per process is measured too.
 */
export async function benchRealImages(
  engines: readonly OcrEngineKind[],
  rounds: number,
  log: (line: string) => void,
): Promise<RealImagesResult> {
  const cores = availableParallelism();
  const queries = JSON.parse(readFileSync(join(QUALITY_FIXTURES, "queries.json"), "utf8")) as {
    files: { name: string; derivedFrom: DerivedFrom | null }[];
  };
  const said = spawnSync("tesseract", ["--version"], { encoding: "utf8" });
  const version = /tesseract\s+v?(\S+)/i.exec(`${said.stdout ?? ""}${said.stderr ?? ""}`)?.[1] ?? null;
  if (!version) log("ocr: the tesseract command is not installed; the real images are read by Locus alone");
  return withTempDir("locus-bench-ocr-real-", async (dir) => {
    // The images where the command reads them (its text files land next to them); the server's data beside.
    const imageDir = join(dir, "images");
    mkdirSync(imageDir);
    const images = await Promise.all(
      REAL_IMAGES.map(async (name) => {
        const data = readFileSync(join(QUALITY_FIXTURES, name));
        copyFileSync(join(QUALITY_FIXTURES, name), join(imageDir, name));
        const { originalWidth: width, originalHeight: height } = await (await openImage(data)).page(1);
        const from = queries.files.find((f) => f.name === name)?.derivedFrom;
        if (!from) throw new Error(`queries.json says nothing of where ${name} comes from`);
        const truth = pdfPageText(join(QUALITY_FIXTURES, from.file), from.page);
        const source = `page ${from.page} of ${from.file}: ${from.how}`;
        return { name, data, bytes: data.length, width, height, source, truth };
      }),
    );
    const truths = images.map((i) => i.truth);
    const known = truths.every((t): t is string => t !== null);
    const score = (texts: readonly string[]) =>
      known ? sumWords(texts.map((text, i) => wordsRead(truths[i] ?? "", text))) : null;

    const list = "ls *.png *.jpg";
    const commands = {
      plain: `${list} | xargs -P ${cores} -I{} tesseract {} {}`,
      oneThread: `${list} | OMP_THREAD_LIMIT=1 xargs -P ${cores} -I{} tesseract {} {}`,
    };
    const oneThreadMs: number[] = [];
    const plainMs: number[] = [];
    const cli = (kind: "plain" | "oneThread") => {
      const ms = timeCommand(commands[kind], imageDir);
      (kind === "plain" ? plainMs : oneThreadMs).push(round(ms));
      return ms;
    };

    const { key } = await createUserWithKey(dir, { plan: "pro" });
    const results: RealImagesEngine[] = [];
    for (const engine of engines) {
      const env = {
        LOCUS_OCR_ENGINE: engine,
        LOCUS_OCR_WORKERS: String(cores),
        LOCUS_RATE_LIMIT_PRO: "100000",
      };
      const result = await withServer(dir, env, async (server) => {
        const c = client(server.baseUrl, key);
        const description =
          server.logs
            .map((line) => /"msg":"Images are read with ([^"]*)"/.exec(line)?.[1])
            .find((d) => d !== undefined) ?? engine;
        const cold = await uploadAll(c, images, `${engine}-cold`);
        log(
          `ocr real images, ${engine} (${description}): first batch on the fresh server ${round(cold.ms)} ms`,
        );
        const measured: Awaited<ReturnType<typeof uploadAll>>[] = [];
        for (let r = 1; r <= rounds; r++) {
          const cliMs = version ? cli("oneThread") : null;
          const batch = await uploadAll(c, images, `${engine}-${r}`);
          measured.push(batch);
          log(
            `ocr real images, ${engine}, round ${r}/${rounds}: ${images.length} images ready in ${round(batch.ms)} ms ` +
              `(${round(batch.clientMs)} ms on the client's clock)` +
              (cliMs === null ? "" : ` (tesseract, one thread a process: ${round(cliMs)} ms)`),
          );
        }
        if (version) log(`ocr real images: tesseract as installed (OpenMP): ${round(cli("plain"))} ms`);
        const last = measured.at(-1) ?? cold;
        return {
          engine,
          description,
          coldMs: round(cold.ms),
          roundsMs: measured.map((m) => round(m.ms)),
          roundsClientMs: measured.map((m) => round(m.clientMs)),
          medianMs: round(median(measured.map((m) => m.ms))),
          passages: last.passages,
          words: score(last.texts),
          ratio: null,
        } satisfies RealImagesEngine;
      });
      results.push(result);
    }
    const medianOneThreadMs = round(median(oneThreadMs));
    const medianPlainMs = round(median(plainMs));
    for (const r of results) {
      r.ratio = version
        ? { oneThread: round2(medianOneThreadMs / r.medianMs), plain: round2(medianPlainMs / r.medianMs) }
        : null;
    }
    return {
      images: images.map(({ name, bytes, width, height, source }) => ({
        name,
        bytes,
        width,
        height,
        source,
      })),
      cores,
      rounds,
      truth: known ? "pdftotext -layout -f N -l N (poppler-utils) of each image's PDF page" : null,
      tesseract: version
        ? {
            version,
            setup: `mkdir -p /tmp/ocr-cli && cp ${REAL_IMAGES.map((n) => `bench/fixtures/quality/${n}`).join(" ")} /tmp/ocr-cli && cd /tmp/ocr-cli`,
            commands,
            oneThreadMs,
            plainMs,
            medianOneThreadMs,
            medianPlainMs,
            // The text files the last run wrote (image.png.txt); threads do not change what it reads.
            words: score(REAL_IMAGES.map((name) => readFileSync(join(imageDir, `${name}.txt`), "utf8"))),
          }
        : null,
      engines: results,
    };
  });
}

const round2 = (value: number) => Math.round(value * 100) / 100;
