// The bench report's PDF ingestion section: generated PDFs, and real manuals against pdftotext.
import type { PdfBenchResult, PdfEngine, PdfSeriesResult, RealManualsResult } from "./pdf-ingestion.ts";
import { fmt, round2, table } from "../harness/report-format.ts";

/** The "PDF ingestion" section of the bench report. */
export function renderPdf(p: PdfBenchResult): string[] {
  const out: string[] = [];
  out.push("## PDF ingestion", "");
  out.push(
    `Text PDFs made with pdfkit (${p.small.linesPerPage} lines of ~70 characters per page), uploaded one at a time through \`POST /api/files/upload\` ` +
      'by a pro user, after one unmeasured warm-up upload; "first after a start": the same small files, each uploaded ' +
      "to a server started for it as soon as it listens. " +
      '"Ready" is measured from the upload response to the first `GET /api/files/{id}` ' +
      'that reports `ready` (polled every N ms, shown); "server" is the ready record\'s `updated_at − created_at` ' +
      "(from the start of the upload to ready, on the server's clock, millisecond resolution).",
    "",
  );
  out.push(
    table(
      [
        "document",
        "runs",
        "size",
        "upload ms",
        "ready ms (median)",
        "server ms (median)",
        "pages/s (median)",
        "server pages/s (median)",
        "poll ms",
        "passages",
      ],
      pdfSeries(p).map(([label, s]) => [
        label,
        s.runs.length,
        `${Math.round((s.runs[0]?.bytes ?? 0) / 1024)} KiB`,
        fmt(s.medianUploadMs),
        fmt(s.medianReadyMs),
        fmt(s.medianServerReadyMs),
        fmt(s.medianPagesPerSecond),
        fmt(s.medianServerPagesPerSecond),
        s.pollMs,
        s.runs[0]?.passageCount ?? 0,
      ]),
    ),
    "",
  );
  out.push("Every run (ready ms after the upload response):");
  for (const [label, s] of pdfSeries(p)) out.push(`- ${label}: ${s.runs.map((x) => x.readyMs).join(", ")}`);
  out.push("");
  if (p.realManuals) out.push(...renderRealManuals(p.realManuals));
  return out;
}

/** Real manuals against pdftotext, per engine. */
function renderRealManuals(m: RealManualsResult): string[] {
  const engines = Object.keys(m.total.pagesPerSecond) as PdfEngine[];
  const label = (engine: PdfEngine) => (engine === "poppler" ? "Poppler" : "pdf.js");
  return [
    "### Real manuals against pdftotext",
    "",
    "Five manuals from Debian packages (`bench/fixtures/manuals`, and the quality set's three; their READMEs say where " +
      "each comes from), uploaded one at a time to a warm server started with `LOCUS_PDF_ENGINE=poppler` and again with " +
      `\`LOCUS_PDF_ENGINE=pdfjs\`; just before each upload, \`${m.command}\` (poppler-utils ${m.pdftotextVersion}) reads the same ` +
      `file. Medians of ${m.runs} runs; Locus's time is upload to \`ready\` on the server's clock (passages indexed, ` +
      "vectors made); the ratio is pdftotext's time over Locus's, the same file in the same minute. " +
      "Rerun the native side with `for f in valgrind_manual nettle; do zcat bench/fixtures/manuals/$f.pdf.gz > /tmp/$f.pdf; done; " +
      "time pdftotext /tmp/valgrind_manual.pdf /dev/null`.",
    "",
    table(
      [
        "manual",
        "pages",
        "passages",
        "pdftotext ms",
        ...engines.flatMap((e) => [`${label(e)} ms`, `${label(e)} / pdftotext`]),
      ],
      [
        ...m.manuals.map((manual) => [
          manual.name,
          manual.pages,
          manual.passages,
          fmt(manual.pdftotextMs),
          ...engines.flatMap((e) => {
            const ms = manual.serverReadyMs[e] ?? 0;
            return [fmt(ms), ms > 0 ? `${round2(manual.pdftotextMs / ms)}×` : "—"];
          }),
        ]),
        [
          "**all five**",
          m.total.pages,
          "",
          `${m.total.pdftotextPagesPerSecond} pages/s`,
          ...engines.flatMap((e) => [`${m.total.pagesPerSecond[e]} pages/s`, `**${m.total.ratio[e]}×**`]),
        ],
      ],
    ),
    "",
  ];
}

/** The PDF series with their labels (reports from before the fresh-start runs have none). */
function pdfSeries(p: PdfBenchResult): [string, PdfSeriesResult][] {
  return [
    [`${p.small.pages} pages`, p.small],
    [`${p.large.pages} pages`, p.large],
    ...(p.firstAfterStart
      ? [
          [`${p.firstAfterStart.pages} pages, first after a start`, p.firstAfterStart] as [
            string,
            PdfSeriesResult,
          ],
        ]
      : []),
  ];
}
