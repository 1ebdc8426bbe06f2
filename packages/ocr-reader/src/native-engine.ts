import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import sharp from "sharp";
import { limitChild, procCpuAvailable, UNLIMITED, type CpuSlots } from "@locus/cpu-scheduler";
import { parseHocr } from "./hocr.ts";
import { readPgm, toPgm, type GreyImage } from "./pgm.ts";
import {
  describeModels,
  installedLanguages,
  languageModels,
  modelFolder,
  OcrSetupError,
  type LanguageModel,
  type ModelFolder,
} from "./languages.ts";
import {
  OcrTimeoutError,
  PooledOcrEngine,
  type OcrEngineOptions,
  type RecognisedLine,
} from "./ocr-engine.ts";

/** The oldest Tesseract with the LSTM recogniser the models are made for. */
const MIN_MAJOR_VERSION = 4;
/** hOCR of a dense 16-megapixel page is a few MB; more than this is not a page's text. */
const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;
/** Of a failed run's stderr, this much (its end) goes into the error. */
const STDERR_TAIL_CHARS = 2000;

/** A `tesseract` command that answered `--version`. */
export interface TesseractBinary {
  /** The command run: a path, or a name looked up on PATH. */
  path: string;
  /** Where it was found, for the log. */
  location: string;
  version: string;
  major: number;
}

/** Why the `tesseract` command cannot be used: missing, broken, or older than Tesseract 4. */
export class TesseractUnavailableError extends OcrSetupError {
  constructor(readonly reason: string) {
    super(
      `The native OCR engine needs the tesseract command, Tesseract ${MIN_MAJOR_VERSION} or later, and ${reason}. ` +
        "Install it (Debian: apt-get install tesseract-ocr), set LOCUS_TESSERACT_PATH to it, " +
        "or set LOCUS_OCR_ENGINE=wasm (or auto) to read images with tesseract.js instead.",
    );
    this.name = "TesseractUnavailableError";
  }
}

/**
 * Asks `command --version` (a path, or a name looked up on PATH) which Tesseract it is; throws
 * TesseractUnavailableError when it does not run or is older than Tesseract 4.
 */
export function findTesseract(command = "tesseract"): TesseractBinary {
  const where = command.includes("/") ? command : `"${command}" (looked up on PATH)`;
  const result = spawnSync(command, ["--version"], { encoding: "utf8", timeout: 10_000, env: process.env });
  if (result.error) {
    const code = (result.error as NodeJS.ErrnoException).code;
    throw new TesseractUnavailableError(
      code === "ENOENT" ? `${where} was not found` : `${where} did not run (${result.error.message})`,
    );
  }
  // Tesseract 4 and later print their version on stdout, 3 on stderr.
  const said = `${result.stdout}\n${result.stderr}`;
  const match = /tesseract\s+v?(\d+)\.(\d+)(?:\.(\d+))?/i.exec(said);
  if (!match || result.status !== 0) {
    const firstLine = said.trim().split("\n")[0]?.slice(0, 200) ?? "";
    throw new TesseractUnavailableError(
      `${where} did not say which Tesseract it is (exit ${result.status ?? result.signal}: "${firstLine}")`,
    );
  }
  const major = Number(match[1]);
  const version = [match[1], match[2], match[3]].filter((part) => part !== undefined).join(".");
  if (major < MIN_MAJOR_VERSION) throw new TesseractUnavailableError(`${where} is Tesseract ${version}`);
  return { path: command, location: locate(command), version, major };
}

/** Where a command is: itself when it names a path, else its first executable file on PATH. */
function locate(command: string): string {
  if (command.includes("/")) return isAbsolute(command) ? command : resolve(command);
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // Not here.
    }
  }
  return command;
}

export interface NativeOcrEngineOptions extends OcrEngineOptions {
  /** The tesseract command: a path, or a name looked up on PATH (default `tesseract`). */
  tesseract?: string | TesseractBinary;
}

/** One recogniser of the pool: the tesseract process it runs at the moment, if any. */
interface Runner {
  child: { process: ChildProcess; exited: Promise<void> } | null;
  ended: boolean;
}

/** A grey page: its pixels, and the PGM that holds them. */
interface GreyPage extends GreyImage {
  pgm: Buffer;
}

/** Formats an image may come in besides PGM: what the extractors' callers could hand over. */
const FORMATS = new Set(["png", "jpeg", "webp", "gif", "tiff"]);

/**
 * The image as the grey PGM tesseract is given, its only input: the extractors' pages already are
 * one; anything else is decoded here, and what is not an image is refused. (Tesseract takes standard
 * input whose first bytes it does not know for a list of file names to read, which must never
 * happen with bytes from an upload.)
 */
async function asPgm(image: Buffer): Promise<GreyPage> {
  const page = readPgm(image);
  if (page) return { ...page, pgm: image };
  try {
    const { format } = await sharp(image).metadata();
    if (!FORMATS.has(format ?? "")) throw new Error(`format ${format ?? "unknown"}`);
    const { data, info } = await sharp(image)
      .flatten({ background: "#ffffff" })
      .greyscale()
      .extractChannel(0)
      .raw()
      .toBuffer({ resolveWithObject: true });
    return {
      width: info.width,
      height: info.height,
      pixels: data,
      pgm: toPgm(info.width, info.height, data),
    };
  } catch (err) {
    throw new Error("The recogniser cannot read this image: it is not a PGM, PNG, JPEG, WebP, GIF or TIFF.", {
      cause: err,
    });
  }
}

/**
 * The page turned by `radians` about its centre (clockwise for a positive angle, as tesseract.js's
 * rotateRadians turns it), same size, the corners brought in white, as a grey PGM.
 */
async function turnImage(page: GreyPage, radians: number): Promise<Buffer> {
  const { width, height } = page;
  const turned = await sharp(page.pixels, { raw: { width, height, channels: 1 } })
    .rotate((radians * 180) / Math.PI, { background: "#ffffff" })
    .greyscale()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const { data, info } = await sharp(turned.data, {
    raw: { width: turned.info.width, height: turned.info.height, channels: turned.info.channels },
  })
    .extract({
      left: Math.max(0, Math.round((turned.info.width - width) / 2)),
      top: Math.max(0, Math.round((turned.info.height - height) / 2)),
      width: Math.min(width, turned.info.width),
      height: Math.min(height, turned.info.height),
    })
    .extractChannel(0)
    .raw()
    .toBuffer({ resolveWithObject: true });
  return toPgm(info.width, info.height, data);
}

/**
 * The `tesseract` command (Tesseract 4 or later, as Debian's tesseract-ocr installs it), one
 * process per image, reading with the same LSTM models as tesseract.js would on this machine
 * (see OcrModelSource: the command's own, or the `@tesseract.js-data/<code>` packages' unpacked
 * once into a private folder on first use). Each process uses one core; the pool gives the
 * parallelism.
 */
export class NativeOcrEngine extends PooledOcrEngine<Runner> {
  readonly kind = "native";
  readonly description: string;
  readonly binary: TesseractBinary;
  // Each tesseract process is held to the time limit in processor time (limitChild, from /proc).
  protected override readonly limitsProcessorTime = procCpuAvailable();
  private readonly models: LanguageModel[];
  private tessdata: Promise<ModelFolder> | undefined;
  private readonly cpu: CpuSlots;

  constructor(options: NativeOcrEngineOptions) {
    super(options);
    this.cpu = options.cpu ?? UNLIMITED;
    this.binary =
      typeof options.tesseract === "object" ? options.tesseract : findTesseract(options.tesseract);
    const source = options.models ?? "auto";
    this.models = languageModels(
      this.languages,
      source,
      source === "packaged" ? null : installedLanguages(this.binary.path),
    );
    this.description = `tesseract ${this.binary.version} (native, ${this.binary.location}; models: ${describeModels(this.models)})`;
  }

  protected startWorker(): Promise<Runner> {
    return Promise.resolve({ child: null, ended: false });
  }

  protected async endWorker(runner: Runner): Promise<void> {
    runner.ended = true;
    const child = runner.child;
    if (!child) return;
    child.process.kill("SIGKILL");
    await child.exited;
  }

  protected async read(
    runner: Runner,
    image: Buffer,
    rotation: number,
    owner: string | undefined,
  ): Promise<RecognisedLine[]> {
    const page = await asPgm(image);
    const input = rotation === 0 ? page.pgm : await turnImage(page, rotation);
    // Checked after the waits: an engine closed meanwhile prepares no models again.
    if (runner.ended) throw new Error("The recogniser was ended.");
    const tessdata = await this.modelFolder();
    return parseHocr(await this.cpu.run(owner ?? "", () => this.runTesseract(runner, tessdata.path, input)));
  }

  protected async release(): Promise<void> {
    const folder = this.tessdata;
    this.tessdata = undefined;
    await (await folder?.catch(() => undefined))?.remove();
  }

  /** The models in one folder, as the command reads them (unpacked), made once. */
  private modelFolder(): Promise<ModelFolder> {
    this.tessdata ??= modelFolder(this.models, false);
    this.tessdata.catch(() => {
      // Tried again with the next image (a full /tmp may have room by then).
      this.tessdata = undefined;
    });
    return this.tessdata;
  }

  /** Runs tesseract on one image (on its standard input) and returns its hOCR. */
  private runTesseract(runner: Runner, tessdata: string, image: Buffer): Promise<string> {
    if (runner.ended) return Promise.reject(new Error("The recogniser was ended."));
    const args = [
      "stdin",
      "stdout",
      "--tessdata-dir",
      tessdata,
      "-l",
      this.languages.join("+"),
      "--oem",
      "1",
      // tesseract.js reads a page as one block of text (the API's default); the command looks for
      // columns first (3) unless told. The same as tesseract.js, for the same lines either way.
      "--psm",
      "6",
      "--dpi",
      "300",
      "-c",
      "tessedit_create_hocr=1",
      "-c",
      "hocr_font_info=0",
    ];
    const child = spawn(this.binary.path, args, {
      stdio: ["pipe", "pipe", "pipe"],
      // One core per process: OpenMP would otherwise start a thread per core in every one.
      env: { ...process.env, OMP_THREAD_LIMIT: "1" },
    });
    let markExited: () => void = () => undefined;
    const exited = new Promise<void>((done) => (markExited = done));
    runner.child = { process: child, exited };
    // Processor time, not time waited for a core; the pool's ceiling catches a hang.
    const limit = limitChild(child, { cpuMs: this.timeoutMs, wallMs: Infinity });
    return new Promise<string>((resolve, reject) => {
      const out: Buffer[] = [];
      let outBytes = 0;
      let stderr = "";
      let failure: Error | undefined;
      let settled = false;
      const settle = (code: number | null, signal: NodeJS.Signals | null) => {
        if (settled) return;
        settled = true;
        limit.dispose();
        if (runner.child?.process === child) runner.child = null;
        markExited();
        if (limit.stoppedFor()) return reject(new OcrTimeoutError(this.timeoutMs, "processor"));
        if (failure) return reject(failure);
        if (code === 0) return resolve(Buffer.concat(out).toString("utf8"));
        const how = signal ? `was killed (${signal})` : `exited with code ${code}`;
        const said = stderr.trim();
        reject(new Error(`tesseract ${how}${said ? `: ${said}` : ""}`));
      };
      child.once("close", settle);
      child.on("error", (err) => {
        failure ??= new Error(`tesseract did not start: ${err.message}`, { cause: err });
        // A process that never started never closes.
        if (child.pid === undefined) settle(null, null);
      });
      child.stdout.on("data", (chunk: Buffer) => {
        outBytes += chunk.length;
        if (outBytes > MAX_OUTPUT_BYTES) {
          failure ??= new Error(`tesseract wrote more than ${MAX_OUTPUT_BYTES >> 20} MB for one image.`);
          child.kill("SIGKILL");
          return;
        }
        out.push(chunk);
      });
      child.stderr.setEncoding("utf8");
      child.stderr.on("data", (chunk: string) => {
        stderr = (stderr + chunk).slice(-STDERR_TAIL_CHARS);
      });
      // A process that ends before reading all its input breaks the pipe: its exit says why.
      child.stdin.on("error", () => undefined);
      child.stdin.end(image);
    });
  }
}
