import { execFileSync, spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { findPoppler } from "@locus/pdf-reader";
import { FIXTURES_DIR } from "../harness/paths.ts";
import {
  DEFAULT_OFFICE_MEMORY_MB,
  inspectOfficeDocument,
  OfficeConverter,
  type OfficeFormat,
} from "../harness/deps.ts";
import { defer } from "../harness/cleanup.ts";
import { withPeakRss } from "../harness/process-memory.ts";
import { since } from "../harness/harness.ts";
import { median, round } from "../harness/stats.ts";

/**
 * Office documents to PDF: the real documents of bench/fixtures/documents (from Debian packages,
 * none written for Locus) converted by Locus's converter (@locus/office-converter: a LibreOffice
 * process per document, fresh profile, no network, memory limit) and, in the same run, by the plain
 * `soffice --headless --convert-to pdf` command a person would type, so the ratio between the two
 * survives a noisy machine where the absolute figures do not. Per kind (writer, presentation,
 * spreadsheet): rendered pages per second and the peak resident memory of the LibreOffice process
 * tree, sampled from /proc.
 */
export interface DocumentsBenchOptions {
  /** Measured rounds over every document, each side; the order of the sides alternates by round. */
  rounds: number;
  /** Longest one conversion may take, either side; beyond it the benchmark fails. */
  timeoutMs: number;
  /** The converter's address-space limit (its default). */
  memoryMb: number;
  /** How often the process tree's resident memory is read from /proc. */
  sampleMs: number;
}

export const DEFAULT_DOCUMENTS_OPTIONS: DocumentsBenchOptions = {
  rounds: 2,
  timeoutMs: 120_000,
  memoryMb: DEFAULT_OFFICE_MEMORY_MB,
  sampleMs: 20,
};

export type DocumentKind = "writer" | "presentation" | "spreadsheet";

/**
 * Who converted: Locus's converter; the soffice command with one profile kept across runs (as a
 * person running it again and again has); the same command with a new profile each time (what the
 * converter does for isolation), to show what that part of the gap costs.
 */
export type Converter = "locus" | "soffice" | "sofficeFreshProfile";
export const CONVERTERS: readonly Converter[] = ["locus", "soffice", "sofficeFreshProfile"];

export interface DocumentResult {
  file: string;
  format: OfficeFormat;
  kind: DocumentKind;
  bytes: number;
  /** Pages of the PDF each converter wrote (first round); they should agree. */
  pages: Record<Converter, number>;
  /** Words pdftotext reads from Locus's PDF: that the text is there, not only the pages. */
  words: number;
  /** Median wall time of one conversion, process start to PDF on disk (or in memory). */
  medianMs: Record<Converter, number>;
  /** Median over rounds of the peak resident memory of the LibreOffice process tree, MB. */
  medianPeakRssMb: Record<Converter, number>;
}

export interface KindResult {
  kind: DocumentKind;
  documents: number;
  pages: number;
  /** The kind's pages over the sum of its documents' median times. */
  pagesPerSecond: Record<Converter, number>;
  /** The highest of its documents' median peaks. */
  peakRssMb: Record<Converter, number>;
  /** Locus's pages/s over the soffice command's (profile kept): ≥ 1 means Locus is as fast. */
  speedRatio: number;
  /** Locus's peak memory over the soffice command's. */
  memoryRatio: number;
}

export interface DocumentsBenchResult {
  libreOfficeVersion: string;
  /** How the converter kept LibreOffice off the network here (a namespace, or its configuration). */
  networkIsolation: string;
  /** The native command as anyone can run it again (the profile path aside). */
  command: string;
  rounds: number;
  sampleMs: number;
  documents: DocumentResult[];
  kinds: KindResult[];
}

const FIXTURES = join(FIXTURES_DIR, "documents");

/** The documents, with the format each is in: the converter's inspection must say the same. */
export const DOCUMENTS: readonly { file: string; format: OfficeFormat }[] = [
  { file: "writer2latex-user-manual.odt", format: "odt" },
  { file: "mingzat-typesample.docx", format: "docx" },
  { file: "abyssinica-sil-typesample.doc", format: "doc" },
  { file: "gworkspace-recycler-help.rtf", format: "rtf" },
  { file: "officer-example.pptx", format: "pptx" },
  { file: "libreoffice-sdk-simple-presentation.odp", format: "odp" },
  { file: "readxl-deaths.xlsx", format: "xlsx" },
  { file: "readxl-datasets.xls", format: "xls" },
];

const KIND: Record<"text" | "presentation" | "spreadsheet", DocumentKind> = {
  text: "writer",
  presentation: "presentation",
  spreadsheet: "spreadsheet",
};

/** `soffice --headless --convert-to pdf --outdir OUT FILE` with the given profile; the PDF's bytes. */
function sofficeCli(profile: string, file: string, outDir: string, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      "soffice",
      [
        `-env:UserInstallation=${pathToFileURL(profile).href}`,
        "--headless",
        "--convert-to",
        "pdf",
        "--outdir",
        outDir,
        file,
      ],
      { stdio: ["ignore", "ignore", "pipe"], detached: true },
    );
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < 4096) stderr += chunk.toString("utf8");
    });
    const killGroup = () => {
      try {
        // The whole group: oosplash and soffice.bin.
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // The group has already ended.
      }
    };
    // Detached, so Ctrl-C does not reach it: the run's cleanup ends it then.
    const stop = defer(killGroup);
    const timer = setTimeout(killGroup, timeoutMs);
    const settle = () => {
      clearTimeout(timer);
      // Whatever is left in the group once soffice has returned ends with it, as in the converter.
      void stop();
    };
    child.on("error", (err) => {
      settle();
      reject(err);
    });
    child.on("close", (code, signal) => {
      settle();
      const pdf = join(outDir, `${file.replace(/^.*\//, "").replace(/\.[^.]+$/, "")}.pdf`);
      readFile(pdf).then(resolve, () =>
        reject(
          new Error(
            `soffice --convert-to pdf ${file}: no PDF (${signal ? `signal ${signal}` : `exit ${code}`}): ${stderr.trim().slice(-400)}`,
          ),
        ),
      );
    });
  });
}

function pdfPagesAndWords(tools: NonNullable<ReturnType<typeof findPoppler>>, pdf: string) {
  const info = execFileSync(tools.pdfinfo, [pdf], { encoding: "utf8" });
  const pages = Number(/^Pages:\s+(\d+)/m.exec(info)?.[1] ?? 0);
  const text = execFileSync(tools.pdftotext, [pdf, "-"], { encoding: "utf8", maxBuffer: 64 * 1024 ** 2 });
  return { pages, words: text.split(/\s+/).filter((w) => /\p{L}/u.test(w)).length };
}

const libreOfficeVersion = () =>
  /LibreOffice\s+(\S+)/.exec(execFileSync("soffice", ["--version"], { encoding: "utf8" }))?.[1] ?? "unknown";

export async function benchDocuments(
  options: DocumentsBenchOptions,
  log: (line: string) => void,
): Promise<DocumentsBenchResult> {
  const tools = findPoppler();
  if (!tools) throw new Error("documents: poppler-utils (pdfinfo, pdftotext) is not installed");
  const converter = new OfficeConverter({ timeoutMs: options.timeoutMs, memoryMb: options.memoryMb });
  const checked = await converter.check();
  if (!checked.ok) throw new Error(`documents: LibreOffice cannot run here: ${checked.reason}`);

  const scratch = await mkdtemp(join(tmpdir(), "locus-bench-documents-"));
  const remove = defer(() => rm(scratch, { recursive: true, force: true }));
  try {
    const docs = await Promise.all(
      DOCUMENTS.map(async ({ file, format }) => {
        const bytes = await readFile(join(FIXTURES, file));
        const inspected = inspectOfficeDocument(bytes);
        if (inspected.format !== format)
          throw new Error(`documents: ${file} was inspected as ${inspected.format}, not ${format}`);
        return { file, format, bytes, path: join(FIXTURES, file), kind: KIND[inspected.family] };
      }),
    );
    const keptProfile = join(scratch, "kept-profile");
    let outputs = 0;
    const convert = async (who: Converter, doc: (typeof docs)[number]): Promise<Buffer> => {
      if (who === "locus") return converter.convertToPdf(doc.bytes, doc.format);
      const outDir = join(scratch, `out-${++outputs}`);
      const profile = who === "soffice" ? keptProfile : join(scratch, `fresh-profile-${outputs}`);
      try {
        return await sofficeCli(profile, doc.path, outDir, options.timeoutMs);
      } finally {
        await rm(outDir, { recursive: true, force: true });
        if (who === "sofficeFreshProfile") await rm(profile, { recursive: true, force: true });
      }
    };

    // Not measured: the kept profile is made, and LibreOffice's files are in the page cache for
    // both sides, as on a machine that converts documents all day.
    const warmup = docs.find((d) => d.format === "rtf") ?? docs[0]!;
    for (const who of CONVERTERS) await convert(who, warmup);

    const ms = new Map<string, number[]>();
    const peaks = new Map<string, number[]>();
    const pages = new Map<string, number>();
    const words = new Map<string, number>();
    for (let r = 1; r <= options.rounds; r++) {
      // Alternating order: neither side always runs just after the other has warmed something.
      const order = r % 2 === 1 ? [...CONVERTERS] : [...CONVERTERS].reverse();
      for (const doc of docs) {
        const line: string[] = [];
        for (const who of order) {
          const started = performance.now();
          const { value: pdf, peakMb } = await withPeakRss(options.sampleMs, () => convert(who, doc));
          const took = since(started);
          const key = `${who} ${doc.file}`;
          ms.set(key, [...(ms.get(key) ?? []), took]);
          peaks.set(key, [...(peaks.get(key) ?? []), peakMb]);
          if (r === 1) {
            const pdfFile = join(scratch, `check-${who}.pdf`);
            await writeFile(pdfFile, pdf);
            const counted = pdfPagesAndWords(tools, pdfFile);
            pages.set(key, counted.pages);
            if (who === "locus") words.set(doc.file, counted.words);
          }
          line.push(`${who} ${Math.round(took)} ms, ${Math.round(peakMb)} MB`);
        }
        log(`documents round ${r}/${options.rounds}: ${doc.file}: ${line.join("; ")}`);
      }
    }
    const leftovers = (await readdir(scratch)).filter((name) => name.startsWith("out-"));
    if (leftovers.length > 0)
      throw new Error(`documents: output folders left behind: ${leftovers.join(", ")}`);

    const perConverter = (f: (who: Converter) => number) =>
      Object.fromEntries(CONVERTERS.map((who) => [who, f(who)])) as Record<Converter, number>;
    const documents: DocumentResult[] = docs.map((doc) => ({
      file: doc.file,
      format: doc.format,
      kind: doc.kind,
      bytes: doc.bytes.length,
      pages: perConverter((who) => pages.get(`${who} ${doc.file}`) ?? 0),
      words: words.get(doc.file) ?? 0,
      medianMs: perConverter((who) => round(median(ms.get(`${who} ${doc.file}`) ?? []))),
      medianPeakRssMb: perConverter((who) => round(median(peaks.get(`${who} ${doc.file}`) ?? []))),
    }));
    const kinds: KindResult[] = (["writer", "presentation", "spreadsheet"] as const).flatMap((kind) => {
      const of = documents.filter((d) => d.kind === kind);
      if (of.length === 0) return [];
      // Pages as LibreOffice renders them for Locus: the pages the PDF extractor reads.
      const kindPages = of.reduce((sum, d) => sum + d.pages.locus, 0);
      const pagesPerSecond = perConverter((who) =>
        round(kindPages / (of.reduce((sum, d) => sum + d.medianMs[who], 0) / 1000)),
      );
      const peakRssMb = perConverter((who) => Math.max(...of.map((d) => d.medianPeakRssMb[who])));
      return [
        {
          kind,
          documents: of.length,
          pages: kindPages,
          pagesPerSecond,
          peakRssMb,
          speedRatio: round2(pagesPerSecond.locus / pagesPerSecond.soffice),
          memoryRatio: round2(peakRssMb.locus / peakRssMb.soffice),
        },
      ];
    });
    return {
      libreOfficeVersion: libreOfficeVersion(),
      networkIsolation: converter.networkIsolation ?? "unknown",
      command:
        "soffice -env:UserInstallation=file:///tmp/PROFILE --headless --convert-to pdf --outdir OUT FILE",
      rounds: options.rounds,
      sampleMs: options.sampleMs,
      documents,
      kinds,
    };
  } finally {
    await remove();
  }
}

const round2 = (value: number) => Math.round(value * 100) / 100;
