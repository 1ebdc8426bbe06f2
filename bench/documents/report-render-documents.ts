// The bench report's office documents section: conversion to PDF by Locus's converter against the soffice command.
import type { Converter, DocumentsBenchResult } from "./documents.ts";
import { fmt, table } from "../harness/report-format.ts";

const LABEL: Record<Converter, string> = {
  locus: "Locus",
  soffice: "soffice",
  sofficeFreshProfile: "soffice, fresh profile",
};

export function renderDocuments(d: DocumentsBenchResult): string[] {
  return [
    "## Office documents to PDF",
    "",
    `Real documents from Debian packages, none written for Locus (\`bench/fixtures/documents\`, its README says where ` +
      `each comes from and what it holds), converted to PDF one at a time by LibreOffice ${d.libreOfficeVersion}: by ` +
      "Locus's converter (`@locus/office-converter`: a LibreOffice process per document with a fresh profile, " +
      `macros off, no network (${d.networkIsolation}), an address-space limit), and in the same run by the plain command ` +
      `a person would type, \`${d.command}\`, with one profile kept across runs ("soffice") and with a new profile ` +
      'each time ("soffice, fresh profile", as the converter starts). After one unmeasured conversion each, ' +
      `${d.rounds} rounds over every document, the order of the three alternating by round; medians. Time: from ` +
      "starting the process to the PDF's bytes. Memory: the peak, sampled from `/proc` every " +
      `${d.sampleMs} ms, of the resident memory of the processes the conversion started (oosplash and soffice.bin; ` +
      "pages they share count in each). Pages: the PDF Locus's converter wrote, as the PDF extractor reads it.",
    "",
    table(
      [
        "kind",
        "documents",
        "pages",
        ...Object.values(LABEL).map((l) => `${l} pages/s`),
        "Locus / soffice speed",
        ...Object.values(LABEL).map((l) => `${l} peak MB`),
        "Locus / soffice memory",
      ],
      d.kinds.map((k) => [
        k.kind,
        k.documents,
        k.pages,
        ...(Object.keys(LABEL) as Converter[]).map((c) => fmt(k.pagesPerSecond[c])),
        `**${k.speedRatio}×**`,
        ...(Object.keys(LABEL) as Converter[]).map((c) => fmt(k.peakRssMb[c])),
        `${k.memoryRatio}×`,
      ]),
    ),
    "",
    "Every document (median ms and peak MB; pages of each converter's PDF; words with a letter in them that pdftotext reads from Locus's):",
    "",
    table(
      [
        "document",
        "kind",
        "size",
        "pages (Locus/soffice/fresh)",
        "words",
        ...Object.values(LABEL).map((l) => `${l} ms`),
        ...Object.values(LABEL).map((l) => `${l} MB`),
      ],
      d.documents.map((doc) => [
        doc.file,
        doc.kind,
        `${Math.round(doc.bytes / 1024)} KiB`,
        `${doc.pages.locus}/${doc.pages.soffice}/${doc.pages.sofficeFreshProfile}`,
        doc.words,
        ...(Object.keys(LABEL) as Converter[]).map((c) => fmt(doc.medianMs[c])),
        ...(Object.keys(LABEL) as Converter[]).map((c) => fmt(doc.medianPeakRssMb[c])),
      ]),
    ),
    "",
  ];
}
