import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { FIXTURES_DIR } from "../harness/paths.ts";
import {
  createOcrEngine,
  DEFAULT_OCR_PASSAGE_OPTIONS,
  estimateLean,
  estimateLineHeight,
  installedLanguages,
  medianLineHeight,
  openImage,
  readPgm,
  type OcrEngine,
  type OcrEngineKind,
  type OcrModelSource,
} from "../harness/deps.ts";
import { since, withTempDir } from "../harness/harness.ts";
import { wordsRight } from "./ocr-words.ts";
import { round } from "../harness/stats.ts";

const FIXTURES = FIXTURES_DIR;

/** The five real manuals of the PDF benchmark (their READMEs say where each comes from). */
const MANUALS = [
  "manuals/valgrind_manual.pdf.gz",
  "manuals/nettle.pdf.gz",
  "quality/libtasn1.pdf",
  "quality/flite.pdf",
  "quality/fontconfig-user.pdf",
];
/** Resolutions the pages are drawn at: a fax-like scan, an office scan, a good scan. */
const DPIS = [100, 125, 150];
/** Where among a manual's dense pages (over 150 words) the pages are taken. */
const AT = [0.2, 0.4, 0.6, 0.8];

/** One page drawn at one resolution, read once with each model, as it is (not scaled up). */
export interface RealPageReading {
  manual: string;
  page: number;
  dpi: number;
  /** Words of the page as `pdftotext -layout` prints it. */
  words: number;
  /** The recogniser's median line height (px), with the first model. */
  readLineHeight: number | null;
  /** The line height its pixels show before any reading (estimateLineHeight). */
  estimatedLineHeight: number | null;
  byModel: { models: OcrModelSource; right: number; ms: number }[];
}

export interface RealPagesResult {
  engine: string;
  readings: RealPageReading[];
}

function pdftotextLayout(pdf: string, page: number): string {
  const said = spawnSync("pdftotext", ["-layout", "-f", String(page), "-l", String(page), pdf, "-"], {
    encoding: "utf8",
  });
  if (said.status !== 0) throw new Error(`pdftotext failed on ${pdf} page ${page}: ${said.stderr}`);
  return said.stdout;
}

function pageCount(pdf: string): number {
  const said = spawnSync("pdfinfo", [pdf], { encoding: "utf8" });
  return Number(/^Pages:\s+(\d+)/m.exec(said.stdout)?.[1] ?? 0);
}

/**
 * Pages of real manuals drawn in grey at 100, 125 and 150 dpi by pdftoppm, each read once as it is
 * with each model source this machine has (the npm packages', and the tesseract command's own
 * where it has English): words right against `pdftotext -layout` of the page, and the line height
 * the recogniser measured against the one estimated from the pixels. What decides LOCUS_OCR_MODELS
 * and the small-text threshold. Needs poppler-utils; null without it.
 */
export async function benchOcrRealPages(
  engineKind: OcrEngineKind,
  workers: number,
  log: (line: string) => void,
): Promise<RealPagesResult | null> {
  if (spawnSync("pdftoppm", ["-v"]).error) {
    log("ocr real pages: skipped, poppler-utils is not installed");
    return null;
  }
  const sources: OcrModelSource[] = installedLanguages("tesseract")?.codes.has("eng")
    ? ["packaged", "system"]
    : ["packaged"];
  return withTempDir("locus-bench-ocr-pages-", async (dir) => {
    const pages: { manual: string; pdf: string; page: number; truth: string }[] = [];
    for (const path of MANUALS) {
      const manual = path.split("/").pop()!.replace(/\.gz$/, "");
      const pdf = join(dir, manual);
      const raw = readFileSync(join(FIXTURES, path));
      writeFileSync(pdf, path.endsWith(".gz") ? gunzipSync(raw) : raw);
      const dense: { page: number; truth: string }[] = [];
      for (let page = 1; page <= pageCount(pdf); page++) {
        const truth = pdftotextLayout(pdf, page);
        if (truth.split(/\s+/).filter(Boolean).length > 150) dense.push({ page, truth });
      }
      for (const at of AT) {
        const chosen = dense[Math.floor(at * dense.length)];
        if (chosen) pages.push({ manual, pdf, ...chosen });
      }
    }
    const engines = new Map<OcrModelSource, OcrEngine>(
      sources.map((models) => [
        models,
        createOcrEngine({ languages: ["eng"], workers, engine: engineKind, models }),
      ]),
    );
    try {
      const jobs = pages.flatMap((p) => DPIS.map((dpi) => ({ ...p, dpi })));
      const readings: RealPageReading[] = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: workers }, async () => {
          while (next < jobs.length) {
            const job = jobs[next++]!;
            const stem = join(dir, `${job.manual}-${job.page}-${job.dpi}`);
            const drawn = spawnSync("pdftoppm", [
              "-r",
              String(job.dpi),
              "-gray",
              "-png",
              "-singlefile",
              "-f",
              String(job.page),
              "-l",
              String(job.page),
              job.pdf,
              stem,
            ]);
            if (drawn.status !== 0) throw new Error(`pdftoppm failed on ${job.manual} page ${job.page}`);
            const prepared = await (await openImage(readFileSync(`${stem}.png`))).page(1, 1);
            const grey = readPgm(prepared.pgm);
            const estimated = grey ? estimateLineHeight(grey, estimateLean(grey)) : null;
            const byModel: RealPageReading["byModel"] = [];
            let readLineHeight: number | null = null;
            for (const models of sources) {
              const started = performance.now();
              const read = await engines.get(models)!.recognize(prepared.pgm);
              const ms = round(since(started));
              readLineHeight ??= medianLineHeight(read, DEFAULT_OCR_PASSAGE_OPTIONS.minConfidence);
              const right = wordsRight(job.truth, read.lines.map((line) => line.text).join("\n"));
              byModel.push({ models, right, ms });
            }
            readings.push({
              manual: job.manual,
              page: job.page,
              dpi: job.dpi,
              words: wordsRight(job.truth, job.truth),
              readLineHeight,
              estimatedLineHeight: estimated,
              byModel,
            });
          }
        }),
      );
      readings.sort((a, b) => a.manual.localeCompare(b.manual) || a.page - b.page || a.dpi - b.dpi);
      log(`ocr real pages: ${readings.length} pages read with ${sources.join(" and ")} models`);
      return { engine: [...engines.values()][0]!.description, readings };
    } finally {
      await Promise.all([...engines.values()].map((engine) => engine.close()));
    }
  });
}
