// The bench report's OCR section: synthetic scans, real page images, and real manual pages.
import type { OcrBenchResult, RealImagesResult } from "./ocr.ts";
import type { WordsRead } from "./ocr-words.ts";
import type { RealPagesResult } from "./ocr-real-pages.ts";
import { fmt, table } from "../harness/report-format.ts";

const wordsCell = (w: WordsRead | null | undefined, order: "inOrder" | "anyOrder") =>
  w ? `${w[order]}/${w.words} (${((w[order] / w.words) * 100).toFixed(1)}%)` : "–";

function renderRealImages(r: RealImagesResult): string[] {
  const cli = r.tesseract;
  const engineName = (engine: string) =>
    engine === "native" ? "native (tesseract command)" : "wasm (tesseract.js)";
  return [
    "### Real page images against the tesseract command",
    "",
    `The quality set's ${r.images.length} page images (pages of Debian manuals: ${r.images
      .map((i) => `\`${i.name}\` ${i.width} × ${i.height}, ${i.source}`)
      .join(
        "; ",
      )}), uploaded at once to a freshly started server with \`LOCUS_OCR_ENGINE=native\` and again with ` +
      `\`LOCUS_OCR_ENGINE=wasm\` (\`LOCUS_OCR_WORKERS=${r.cores}\`); Locus's time is from the first upload to the last ` +
      `image \`ready\` (passages indexed) on the server's clock (the first record's \`created_at\` to the last one's ` +
      `\`updated_at\`; each file polled every 100 ms, since asking every 20 ms took CPU from the recognisers), the ` +
      `median of ${r.rounds} batches after the first one ` +
      "(which starts the recognisers). Just before each batch, the `tesseract` command reads the same images, one process " +
      `per core (${r.cores}), with Debian's \`eng\` data and its defaults (page segmentation 3); as installed it runs ` +
      "OpenMP threads in every process, which is also measured once per server. The ratio is the command's time over " +
      "Locus's (≥ 1: Locus is as fast). Locus reads with the models its start-up chose (`LOCUS_OCR_MODELS=auto`: the " +
      "command's own where it has the language, named in each row), as one block of text (page segmentation 6), a page " +
      "whose lines lean turned straight first, and small text (lines measured from the pixels) scaled up first.",
    "",
    table(
      [
        "reader",
        "ms (median)",
        "batches ms",
        "first batch ms",
        "passages",
        "words right, in order",
        "in any order",
        "tesseract as installed ÷ it",
        "one-thread tesseract ÷ it",
      ],
      [
        ...r.engines.map((e) => [
          `Locus, ${engineName(e.engine)}: ${e.description}`,
          fmt(e.medianMs),
          e.roundsMs.map(fmt).join(", "),
          fmt(e.coldMs),
          e.passages,
          wordsCell(e.words, "inOrder"),
          wordsCell(e.words, "anyOrder"),
          e.ratio ? `**${e.ratio.plain}×**` : "–",
          e.ratio ? `**${e.ratio.oneThread}×**` : "–",
        ]),
        ...(cli
          ? [
              [
                `tesseract ${cli.version}, as installed`,
                fmt(cli.medianPlainMs),
                cli.plainMs.map(fmt).join(", "),
                "",
                "",
                wordsCell(cli.words, "inOrder"),
                wordsCell(cli.words, "anyOrder"),
                "",
                "",
              ],
              [
                `tesseract ${cli.version}, OMP_THREAD_LIMIT=1`,
                fmt(cli.medianOneThreadMs),
                cli.oneThreadMs.map(fmt).join(", "),
                "",
                "",
                wordsCell(cli.words, "inOrder"),
                wordsCell(cli.words, "anyOrder"),
                "",
                "",
              ],
            ]
          : []),
      ],
    ),
    "",
    r.truth
      ? `Words right against ${r.truth}: in order as above (a word-level alignment), and in any order (each word of the ` +
        "truth found once, wherever it was read: the command's own layout analysis may read a table's columns one after another)."
      : "Words right: not measured (pdftotext is not installed).",
    "",
    ...(cli
      ? [
          "The command's side, to run again (`time` each line):",
          "",
          "```sh",
          cli.setup,
          `time (${cli.commands.plain})`,
          `time (${cli.commands.oneThread})`,
          "```",
          "",
          "Locus's side: `pnpm bench --only ocr` (or start the server with `LOCUS_OCR_ENGINE=native` or `wasm` and upload the three images at once).",
          "",
        ]
      : ["The tesseract command is not installed: Locus's side only.", ""]),
  ];
}

export function renderOcr(o: OcrBenchResult): string[] {
  const t = o.throughput;
  return [
    "## OCR (images and scanned PDFs)",
    "",
    `The OCR library the image extractor runs (${t.engine ?? "tesseract.js"}, ${t.workers} recognisers), ` +
      `without the server around it. Pages are A4 at 150 dpi (1240 × 1754 px) with ${t.linesPerPage} lines of 11 pt English ` +
      "(about 60 characters each), grey noise ±20 and JPEG quality 80, drawn in the benchmark; each round reads " +
      `${t.pages} pages, ${t.workers} at a time, on recognisers already started.`,
    "",
    table(
      ["round", "ms", "pages/s"],
      t.rounds.map((r, i) => [i + 1, fmt(r.ms), fmt(r.pagesPerSecond)]),
    ),
    "",
    `- Median: **${t.medianPagesPerSecond} pages/s**; the first page on a cold engine (loading the model) took ${fmt(t.coldFirstPageMs)} ms.`,
    "",
    "Words right (words of the known text found in order in what was read: a word-level alignment, case-sensitive, punctuation around words ignored):",
    "",
    table(
      ["engine", "image", "words", "right", "accuracy", "ms"],
      o.accuracy.map((a) => [
        a.engine ?? "wasm",
        a.variant,
        a.words,
        a.correct,
        `${(a.accuracy * 100).toFixed(1)}%`,
        fmt(a.ms),
      ]),
    ),
    "",
    `A scanned PDF (${o.scannedPdf.pages} pages of those 150-dpi scans, no text layer) uploaded to the running server, after a one-page ` +
      `warm-up: ready in ${fmt(o.scannedPdf.serverReadyMs)} ms on the server's clock, **${o.scannedPdf.pagesPerSecond} pages/s** ` +
      `(each page drawn at LOCUS_PDF_OCR_DPI by the server's PDF engine, pdftoppm where Poppler is installed, else pdf.js; then OCR), ${o.scannedPdf.passages} passages.`,
    "",
    ...(o.realImages ? renderRealImages(o.realImages) : []),
    ...(o.realPages ? renderRealPages(o.realPages) : []),
  ];
}

/** Real manual pages at three resolutions: each model's words right, and the line heights. */
function renderRealPages(r: RealPagesResult): string[] {
  const dpis = [...new Set(r.readings.map((p) => p.dpi))].sort((a, b) => a - b);
  const models = [...new Set(r.readings.flatMap((p) => p.byModel.map((m) => m.models)))];
  const pct = (right: number, words: number) => `${((right / Math.max(1, words)) * 100).toFixed(2)}%`;
  const rows = dpis.flatMap((dpi) => {
    const at = r.readings.filter((p) => p.dpi === dpi);
    const words = at.reduce((sum, p) => sum + p.words, 0);
    return models.map((models) => {
      const mine = at.flatMap((p) => p.byModel.filter((m) => m.models === models));
      return [
        dpi,
        models,
        at.length,
        words,
        pct(
          mine.reduce((sum, m) => sum + m.right, 0),
          words,
        ),
        fmt(mine.reduce((sum, m) => sum + m.ms, 0)),
      ];
    });
  });
  const differences = new Map<string, number>();
  for (const p of r.readings) {
    const d =
      p.estimatedLineHeight === null || p.readLineHeight === null
        ? "no estimate"
        : `${p.estimatedLineHeight - p.readLineHeight >= 0 ? "+" : ""}${p.estimatedLineHeight - p.readLineHeight} px`;
    differences.set(d, (differences.get(d) ?? 0) + 1);
  }
  return [
    "",
    "### Real manual pages: models and text size",
    "",
    `${r.readings.length / dpis.length} dense pages (over 150 words) of the five real manuals of the PDF benchmark, at a fifth, two fifths, three fifths and four fifths of each manual's dense pages, ` +
      `drawn in grey at ${dpis.join(", ")} dpi by \`pdftoppm\` and read once as they are (not scaled up) by ${r.engine.replace(/; models: .*\)$/, ")")}, ` +
      "with each model this machine has (`LOCUS_OCR_MODELS=packaged`: the `@tesseract.js-data/eng` best model, integer; `system`: the tesseract " +
      "command's own, Debian's fast model). Words right against `pdftotext -layout` of the page (a word-level alignment); ms: the readings' sum, two at a time.",
    "",
    table(["dpi", "models", "pages", "words", "right", "ms"], rows),
    "",
    "The line height the pixels show before any reading (estimateLineHeight), against the recogniser's median line height on the same page " +
      "(what decides whether a page is scaled up first): " +
      [...differences.entries()]
        .sort((a, b) => b[1] - a[1])
        .map(([d, n]) => `${d === "+0 px" ? "equal" : d}: ${n}`)
        .join(", ") +
      ".",
    "",
  ];
}
