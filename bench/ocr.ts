import { buildVocabulary, rng } from "./corpus.ts";
import {
  client,
  createUserWithKey,
  extractImage,
  makeScannedPdf,
  makeTextImage,
  OcrEngine,
  type TextImageSpec,
} from "./deps.ts";
import { since, withServer, withTempDir } from "./harness.ts";
import { ingest } from "./pdf-ingestion.ts";
import { median, round } from "./stats.ts";

/**
 * OCR figures: throughput of the OCR library on 150-dpi page scans (the recognisers the image
 * extractor runs, without the server around them), word accuracy on images of known text, and a
 * scanned PDF through the running server (drawing pages with pdf.js, then OCR).
 */
export interface OcrBenchOptions {
  /** Pages per throughput round; read `workers` at a time, as the image extractor does. */
  pages: number;
  rounds: number;
  linesPerPage: number;
  workers: number;
  /** Pages of the scanned PDF sent through the server. */
  scannedPdfPages: number;
}

export const DEFAULT_OCR_OPTIONS: OcrBenchOptions = {
  pages: 6,
  rounds: 3,
  linesPerPage: 30,
  workers: 2,
  scannedPdfPages: 6,
};

export interface AccuracyResult {
  variant: string;
  words: number;
  correct: number;
  /** correct / words. */
  accuracy: number;
  ms: number;
}

export interface OcrBenchResult {
  throughput: {
    pages: number;
    linesPerPage: number;
    workers: number;
    /** The first page on a cold engine: recogniser start-up (model loading) plus one page. */
    coldFirstPageMs: number;
    rounds: { ms: number; pagesPerSecond: number }[];
    medianPagesPerSecond: number;
  };
  accuracy: AccuracyResult[];
  scannedPdf: { pages: number; serverReadyMs: number; pagesPerSecond: number; passages: number };
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

const tokens = (text: string) =>
  text
    .split(/\s+/)
    .map((t) => t.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, ""))
    .filter(Boolean);

/**
 * Words read right: the length of the best alignment of the read words with the expected ones
 * (matches in a word-level edit-distance alignment), case-sensitive, punctuation around words
 * ignored. Insertions (noise read as words) do not count as right, and do not take any away.
 */
export function wordsRight(expected: string, read: string): number {
  const a = tokens(expected);
  const b = tokens(read);
  // Longest common subsequence of words: what an edit-distance alignment can keep unchanged.
  let prev = new Array<number>(b.length + 1).fill(0);
  for (const word of a) {
    const row = new Array<number>(b.length + 1).fill(0);
    for (let j = 1; j <= b.length; j++) {
      row[j] = word === b[j - 1] ? prev[j - 1]! + 1 : Math.max(prev[j]!, row[j - 1]!);
    }
    prev = row;
  }
  return prev[b.length]!;
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

export async function benchOcr(
  options: OcrBenchOptions,
  log: (line: string) => void,
): Promise<OcrBenchResult> {
  const engine = new OcrEngine({ languages: ["eng"], workers: options.workers });
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
    log(`ocr: first page on a cold engine ${coldFirstPageMs} ms`);
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
    const accuracy: AccuracyResult[] = [];
    for (const [variant, spec] of variants) {
      const image = await makeTextImage(spec);
      const t = performance.now();
      const read = await readAll(image.data, engine);
      const expected = spec.lines.join("\n");
      const words = tokens(expected).length;
      const correct = wordsRight(expected, read);
      accuracy.push({
        variant,
        words,
        correct,
        accuracy: Math.round((correct / words) * 10_000) / 10_000,
        ms: round(since(t)),
      });
      log(`ocr: ${variant}: ${correct}/${words} words right`);
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

    return {
      throughput: {
        pages: options.pages,
        linesPerPage: options.linesPerPage,
        workers: options.workers,
        coldFirstPageMs,
        rounds,
        medianPagesPerSecond: round(median(rounds.map((r) => r.pagesPerSecond))),
      },
      accuracy,
      scannedPdf,
    };
  } finally {
    await engine.close();
  }
}
