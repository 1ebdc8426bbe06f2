import { spawn, spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { StringDecoder } from "node:string_decoder";
// The entities of pdftotext's XML: the library the HTML parsers use, not a hand-written decoder.
import { stallWatched } from "@locus/cpu-scheduler";
import { decodeXML } from "entities";
import { buildLines, type TextPiece } from "./lines.ts";
import type { OpenedPdf, PdfPageText, RenderedPage, RenderOptions } from "./pdfjs-reader.ts";

/**
 * Poppler's command-line tools (Debian's `poppler-utils`): they read a text layer several times
 * faster than pdf.js, each in a process of its own, outside the Node heap.
 */
export interface PopplerTools {
  pdftotext: string;
  pdfinfo: string;
  pdftoppm: string;
  /** As `pdftotext -v` gives it, e.g. "22.12.0". */
  version: string;
  /**
   * Commands put before each tool so that the kernel bounds it whatever becomes of the thread that
   * started it: util-linux's `prlimit` (processor time and address space) and coreutils' `timeout`
   * (wall clock, a ceiling for hangs).
   */
  bounds: { timeout?: string; prlimit?: string };
}

export interface PopplerLimits {
  /**
   * Processor time one tool may use, in seconds (pdftotext: for each 100 pages): past it the kernel
   * stops the tool. Waiting for a core on a busy machine does not count; only the tool's own work
   * does. pdfinfo and pdftoppm are also stopped after {@link HANG_FACTOR} times as long on the wall
   * clock (a hang uses no processor time), and pdftotext after giving no page for that long while
   * its reader waits for one (its reader, not the tool, sets its pace).
   */
  maxSeconds: number;
  /** Address space of one tool process. */
  maxMemoryBytes: number;
}

/**
 * How many times its processor-time budget a tool may take on the wall clock before it is taken
 * for hung: enough for a machine whose cores are shared with many busy processes.
 */
const HANG_FACTOR = 10;

/** Pages of pdftotext's output one {@link PopplerLimits.maxSeconds} of processor time is for. */
const PAGES_PER_BUDGET = 100;

/**
 * Seconds between the processor-time limit's warning (SIGXCPU, which ends the tool and names the
 * cause) and the kernel's SIGKILL, for a tool that would ignore the warning.
 */
const CPU_GRACE_SECONDS = 5;

/** Why Poppler gave up on a file; the caller reads the rest with pdf.js, which says what is wrong. */
export class PopplerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PopplerError";
  }
}

/** A tool's absolute path if it is on `path` and runs, else undefined: `command -v` without a shell. */
function onPath(name: string, path: string): string | undefined {
  for (const dir of path.split(":")) {
    if (!dir.startsWith("/")) continue; // a relative PATH entry would depend on the working directory
    const candidate = `${dir}/${name}`;
    try {
      // Looked at before it is run: a long PATH would otherwise cost a process start per folder.
      accessSync(candidate, constants.X_OK);
    } catch {
      continue;
    }
    const probe = spawnSync(candidate, ["--version"], { stdio: "ignore", timeout: 5_000 });
    if (!probe.error) return candidate;
  }
  return undefined;
}

/** Poppler's tools if all three are installed and answer, else undefined. */
export function findPoppler(path = process.env.PATH ?? ""): PopplerTools | undefined {
  const pdftotext = onPath("pdftotext", path);
  const pdfinfo = onPath("pdfinfo", path);
  const pdftoppm = onPath("pdftoppm", path);
  if (!pdftotext || !pdfinfo || !pdftoppm) return undefined;
  const said = spawnSync(pdftotext, ["-v"], { encoding: "utf8", timeout: 5_000 });
  const version = /pdftotext version (\d+\.\d+(?:\.\d+)?)/.exec(`${said.stderr}${said.stdout}`)?.[1];
  if (!version) return undefined;
  const timeout = onPath("timeout", path);
  const prlimit = onPath("prlimit", path);
  return {
    pdftotext,
    pdfinfo,
    pdftoppm,
    version,
    bounds: { ...(timeout ? { timeout } : {}), ...(prlimit ? { prlimit } : {}) },
  };
}

/** The bounds of one run of a tool. */
interface RunBounds {
  /** Processor time, in seconds. */
  cpuSeconds: number;
  /** Wall clock, in seconds; Infinity when the tool's pace is its reader's. */
  wallSeconds: number;
  memoryBytes: number;
}

/** The bounds of one run: `cpuSeconds` of processor time, {@link HANG_FACTOR} times that on the wall clock. */
const boundsOf = (limits: PopplerLimits, cpuSeconds = limits.maxSeconds): RunBounds => ({
  cpuSeconds,
  wallSeconds: HANG_FACTOR * cpuSeconds,
  memoryBytes: limits.maxMemoryBytes,
});

/** Runs a tool inside the kernel's bounds, the PDF on its standard input. */
function run(tools: PopplerTools, bounds: RunBounds, tool: string, args: string[], pdf: Uint8Array) {
  let file = tool;
  let argv = args;
  const cpu = Math.ceil(bounds.cpuSeconds);
  if (tools.bounds.prlimit) {
    argv = [
      `--as=${Math.floor(bounds.memoryBytes)}`,
      // SIGXCPU at the budget (it ends the tool and says why), SIGKILL a little later.
      `--cpu=${cpu}:${cpu + CPU_GRACE_SECONDS}`,
      // A tool ended by SIGXCPU would otherwise write a core file.
      "--core=0",
      "--",
      file,
      ...argv,
    ];
    file = tools.bounds.prlimit;
  }
  if (tools.bounds.timeout && bounds.wallSeconds < Infinity) {
    argv = ["-s", "KILL", String(Math.ceil(bounds.wallSeconds)), file, ...argv];
    file = tools.bounds.timeout;
  }
  const child = spawn(file, argv, { stdio: ["pipe", "pipe", "pipe"], env: { LANG: "C.UTF-8" } });
  // A tool that stops reading early (a damaged file) closes its end: not an error of ours.
  child.stdin.on("error", () => undefined);
  child.stdin.end(pdf);
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => {
    if (stderr.length < 4_096) stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on("close", (code, signal) => resolve({ code, signal }));
    child.on("error", () => resolve({ code: null, signal: null }));
  });
  /** Set when this side stopped the tool, with why. */
  let stoppedBecause: string | undefined;
  const stop = (because: string) => {
    stoppedBecause ??= because;
    child.kill("SIGKILL");
  };
  const failure = async (what: string) => {
    const { code, signal } = await exited;
    const tail = stderr.trim().split("\n").slice(-2).join(" / ");
    const why =
      stoppedBecause ??
      (signal === "SIGXCPU" || code === 128 + 24 // prlimit or timeout passing the tool's death on as a code
        ? `used more than its ${cpu} s of processor time`
        : undefined);
    return new PopplerError(
      `${what} ended with ${signal ? `signal ${signal}` : `code ${code}`}${why ? ` (${why})` : ""}${tail ? `: ${tail}` : ""}`,
    );
  };
  return { child, exited, failure, stop };
}

/** Most characters of one page of pdftotext's output held at once; a page past it is not Poppler's to read. */
const MAX_PAGE_CHARS = 32 * 1024 * 1024;

/** Letters' reach above and below the baseline in Poppler's word boxes, as shares of the font size (typical fonts). */
const BOX_HEIGHT = 0.93;
const BOX_DESCENT = 0.21;

// eslint-disable-next-line no-control-regex -- control characters are what it removes
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/g;
const PAGE = /<page width="([\d.]+)" height="([\d.]+)">/;
const WORD = /<word xMin="(-?[\d.]+)" yMin="(-?[\d.]+)" xMax="(-?[\d.]+)" yMax="(-?[\d.]+)">([^<]*)<\/word>/g;

/**
 * One page of `pdftotext -bbox` as the pieces line building takes (baselines in PDF units
 * from the bottom, like pdf.js's), so both readers make lines, numbers and boxes the same way.
 */
export function pageOf(xml: string): { width: number; height: number; pieces: TextPiece[] } {
  const size = PAGE.exec(xml);
  const width = Number(size?.[1] ?? 0);
  const height = Number(size?.[2] ?? 0);
  const pieces: TextPiece[] = [];
  for (const m of xml.matchAll(WORD)) {
    // Glyphs a font gives no character for (TeX's large brackets, from cmex) come out as control
    // characters: never text, so dropped.
    const text = decodeXML(m[5] ?? "").replace(CONTROL_CHARACTERS, "");
    if (text === "") continue;
    const [x0, y0, x1, y1] = [Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4])];
    const fontSize = Math.max(y1 - y0, 0) / BOX_HEIGHT;
    const baseline = y1 - BOX_DESCENT * fontSize; // from the top
    pieces.push({
      text,
      x: x0,
      y: height - baseline,
      width: x1 - x0,
      height: fontSize,
    });
  }
  return { width, height, pieces };
}

/** The pages of pdftotext's output as they come, each once its closing tag has arrived. */
async function* pagesOf(stdout: NodeJS.ReadableStream): AsyncGenerator<string> {
  const decoder = new StringDecoder("utf8");
  let held = "";
  for await (const chunk of stdout) {
    // Where a closing tag may begin: one cut by the chunk's edge is found whole.
    let from = Math.max(0, held.length - "</page>".length);
    held += decoder.write(chunk);
    let end: number;
    while ((end = held.indexOf("</page>", from)) !== -1) {
      const start = held.indexOf("<page ");
      yield held.slice(start === -1 ? 0 : start, end);
      held = held.slice(end + 7);
      from = 0;
    }
    if (held.length > MAX_PAGE_CHARS) throw new PopplerError("one page of text is larger than Locus reads");
  }
}

/**
 * Opens a PDF with Poppler: `pdfinfo` for the page count, then `pdftotext -bbox` streams
 * every page's words with their boxes, and `pdftoppm` draws a page that needs OCR. A tool that
 * fails (a damaged or unusual file, a permission flag pdftotext honours) throws PopplerError,
 * before the first page or between two pages: the caller reads what is left with pdf.js.
 */
export async function openPdfWithPoppler(
  data: Uint8Array,
  tools: PopplerTools,
  limits: PopplerLimits,
): Promise<OpenedPdf> {
  const info = run(tools, boundsOf(limits), tools.pdfinfo, ["-"], data);
  let said = "";
  info.child.stdout.setEncoding("utf8");
  for await (const chunk of info.child.stdout) said += chunk as string;
  const { code } = await info.exited;
  const pageCount = Number(/^Pages:\s+(\d+)/m.exec(said)?.[1] ?? NaN);
  if (code !== 0 || !Number.isInteger(pageCount)) throw await info.failure("pdfinfo");

  let text: ReturnType<typeof run> | undefined;
  return {
    pageCount,
    async *pages(from = 1): AsyncGenerator<PdfPageText> {
      const first = Math.max(1, from);
      if (first > pageCount) return;
      const reading = run(
        tools,
        {
          ...boundsOf(limits, limits.maxSeconds * Math.ceil((pageCount - first + 1) / PAGES_PER_BUDGET)),
          wallSeconds: Infinity,
        },
        tools.pdftotext,
        // Words only: Locus builds lines itself, and `-bbox-layout`'s blocks cost 15% more time.
        ["-bbox", "-enc", "UTF-8", "-f", String(first), "-", "-"],
        data,
      );
      text = reading;
      // Only the wait for the next page counts towards a hang: the time the reader spends on a page
      // (OCR of a scanned one, waiting for a core) is its own.
      const stallSeconds = HANG_FACTOR * limits.maxSeconds;
      const pages = stallWatched(pagesOf(reading.child.stdout), stallSeconds * 1000, () =>
        reading.stop(`gave no page for ${stallSeconds} s (a hang)`),
      );
      let n = first - 1;
      for await (const pageText of pages) {
        n += 1;
        const page = pageOf(pageText);
        const toPage = (x: number, y: number): [number, number] => [x, page.height - y];
        const number = n;
        yield {
          page: number,
          lines: buildLines(page.pieces, toPage),
          render: (options) => renderPage(tools, limits, data, number, page, options),
        };
      }
      const { code: exit } = await reading.exited;
      if (exit !== 0 || n !== pageCount) {
        throw await reading.failure(`pdftotext (after page ${n} of ${pageCount})`);
      }
    },
    close: () => {
      text?.child.kill("SIGKILL");
      return Promise.resolve();
    },
  };
}

/** Draws one page in grey with pdftoppm, within the pixel budget. */
async function renderPage(
  tools: PopplerTools,
  limits: PopplerLimits,
  data: Uint8Array,
  n: number,
  page: { width: number; height: number },
  options: RenderOptions,
): Promise<RenderedPage> {
  const budget = Math.sqrt(options.maxPixels / Math.max(1, page.width * page.height)) * 72;
  const dpi = Math.max(1, Math.min(options.dpi, budget));
  const draw = run(
    tools,
    boundsOf(limits),
    tools.pdftoppm,
    ["-f", String(n), "-l", String(n), "-r", dpi.toFixed(3), "-gray", "-"],
    data,
  );
  const chunks: Buffer[] = [];
  for await (const chunk of draw.child.stdout) chunks.push(chunk as Buffer);
  const { code } = await draw.exited;
  if (code !== 0) throw await draw.failure("pdftoppm");
  const pgm = Buffer.concat(chunks);
  // Binary PGM: "P5", width, height, maximum value, one whitespace, then a byte a pixel.
  const header = /^P5\s+(\d+)\s+(\d+)\s+(\d+)\s/.exec(pgm.subarray(0, 64).toString("latin1"));
  const width = Number(header?.[1]);
  const height = Number(header?.[2]);
  if (!header || Number(header[3]) > 255 || pgm.length < header[0].length + width * height) {
    throw new PopplerError("pdftoppm gave no grey image");
  }
  const grey = new Uint8Array(pgm.subarray(header[0].length, header[0].length + width * height));
  return { grey, width, height, pointsPerPixel: page.width / width };
}
