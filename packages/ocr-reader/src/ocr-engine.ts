import { availableParallelism } from "node:os";
import type { CpuSlots } from "@locus/cpu-scheduler";
import { FileRejectedError } from "@locus/contracts";
import type { OcrModelSource } from "./languages.ts";
import { estimateLean } from "./lean.ts";
import { readPgm } from "./pgm.ts";

/** A rectangle in pixels, from the top-left corner. */
export interface PixelBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** One line as the recogniser read it, in the pixels of the image it was given. */
export interface OcrLine {
  text: string;
  /** 0–1: how sure the recogniser is of the line's words. */
  confidence: number;
  bbox: PixelBox;
}

export interface OcrPage {
  /** Lines in reading order (blocks, then paragraphs, then lines), empty ones left out. */
  lines: OcrLine[];
  /**
   * Radians the recogniser turned the image by to straighten its lines before reading (about its
   * centre, same size): the boxes are in the turned image.
   */
  rotation: number;
}

/**
 * Which Tesseract reads the images: `native`, the `tesseract` command (Tesseract 4 or later), one
 * process per image; `wasm`, tesseract.js (WebAssembly) in worker threads. Both read with the same
 * models (see OcrModelSource) and the same settings, and give the same lines but for the last
 * digits of the arithmetic (test/ocr-engines.contract.test.ts measures how far apart).
 */
export type OcrEngineKind = "native" | "wasm";

/** A pool of recognisers shared by every extractor of the process. */
export interface OcrEngine {
  readonly kind: OcrEngineKind;
  /** Which recogniser this is, for the start-up log. */
  readonly description: string;
  /** Images read at once. */
  readonly workers: number;
  /**
   * Reads the lines of an image: a grey PGM, as the extractors prepare their pages (PNG, JPEG,
   * WebP, GIF and TIFF are read too). What is not an image is refused with an error. `lean`, when
   * the caller has measured it already (see estimateLean), saves measuring it again; `owner` is the
   * file the image is of, whose turn it takes with other files' CPU-heavy work (see CpuSlots).
   */
  recognize(image: Buffer, options?: RecognizeOptions): Promise<OcrPage>;
  /** Ends every recogniser (an image being read is given up) and rejects the images waiting. */
  close(): Promise<void>;
}

export interface RecognizeOptions {
  lean?: number | undefined;
  owner?: string | undefined;
}

/** What an OCR engine tells whoever counts (metrics). */
export interface OcrObserver {
  /**
   * A recogniser was done with one image (read, or failed or timed out: `error`) after `seconds`,
   * from when it took the image, so the wait for a free one is not counted.
   */
  imageRecognised(engine: OcrEngineKind, outcome: "ok" | "error", seconds: number): void;
}

export interface OcrEngineOptions {
  /** Tesseract language codes, each from its `@tesseract.js-data/<code>` package or the system's. */
  languages: readonly string[];
  /** Where the models come from (default `auto`: the tesseract command's own where it has them). */
  models?: OcrModelSource;
  /** Images read at once: recognisers (wasm threads or native processes), ~150–250 MB each. */
  workers?: number;
  /**
   * One image taking longer than this is given up: its recogniser is ended and replaced. Processor
   * time where the engine can measure it (the tesseract command), with a wall-clock ceiling ten
   * times as long for hangs; wall-clock time otherwise (tesseract.js's threads).
   */
  timeoutMs?: number;
  /** Where the native engine's tesseract processes take their turn with other CPU-heavy work. */
  cpu?: CpuSlots | undefined;
  /** Recognisers idle this long are ended, giving their memory back; the next image starts one. */
  idleMs?: number;
  observer?: OcrObserver | undefined;
}

/** An image the recogniser gave up on; a property of the image, so retrying will not help. */
export class OcrTimeoutError extends FileRejectedError {
  declare readonly code: "ocr_timeout";
  /** `measured`: processor time used, or time passed (a hang, or an engine that cannot tell). */
  constructor(
    readonly timeoutMs: number,
    measured: "processor" | "wall" = "wall",
  ) {
    // Whole seconds, but a tenth under ten (a limit set in milliseconds must not read "0 s").
    const s = timeoutMs / 1000;
    const seconds = s >= 10 ? Math.round(s) : Number(s.toFixed(1));
    super(
      "ocr_timeout",
      measured === "processor"
        ? `Reading the text of one image used more than ${seconds} s of processor time.`
        : `Reading the text of one image took longer than ${seconds} s.`,
    );
    this.name = "OcrTimeoutError";
  }
}

/**
 * The wall-clock ceiling of an engine that limits processor time, as a multiple of its budget:
 * only a hang reaches it, not a busy machine or a wait for a CPU slot.
 */
const WALL_PER_CPU = 10;

/** A corner-to-corner box, as Tesseract reports them. */
export interface CornerBox {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/** One line as a recogniser reports it, before Locus reads it. */
export interface RecognisedLine {
  text: string;
  /** 0–100, Tesseract's scale. */
  confidence: number;
  bbox: CornerBox;
  /** Where the line's baseline starts and ends; absent when the recogniser gave none. */
  baseline?: CornerBox;
}

interface Job {
  image: Buffer;
  lean: number | undefined;
  owner: string | undefined;
  resolve: (page: OcrPage) => void;
  reject: (err: unknown) => void;
}

interface Slot<W> {
  worker: Promise<W> | null;
  busy: boolean;
}

/**
 * The pool both engines share: recognisers started on first use (a process that never sees an
 * image pays nothing), reused across files, each image queued until one is free, one that takes
 * too long or fails ended and replaced, idle ones ended after a while. An engine says how to start,
 * end and read with one recogniser; the straightening of leaning lines is done here, alike for both.
 */
export abstract class PooledOcrEngine<W> implements OcrEngine {
  abstract readonly kind: OcrEngineKind;
  abstract readonly description: string;
  protected readonly languages: string[];
  private readonly slots: Slot<W>[];
  private readonly queue: Job[] = [];
  protected readonly timeoutMs: number;
  /**
   * Whether read() holds each image to timeoutMs of processor time itself: the pool's own limit is
   * then only a ceiling for hangs (WALL_PER_CPU times as long).
   */
  protected readonly limitsProcessorTime: boolean = false;
  private readonly idleMs: number;
  private readonly observer: OcrObserver | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Rejects when the engine is closed: the images being read are given up at once. */
  private readonly closing: Promise<never>;
  private rejectClosing: (err: Error) => void = () => undefined;

  constructor(options: OcrEngineOptions) {
    this.languages = [...new Set(options.languages)];
    const workers = options.workers ?? Math.max(1, availableParallelism());
    this.slots = Array.from({ length: workers }, () => ({ worker: null, busy: false }));
    this.timeoutMs = options.timeoutMs ?? 120_000;
    this.idleMs = options.idleMs ?? 5 * 60_000;
    this.observer = options.observer;
    this.closing = new Promise<never>((_, reject) => (this.rejectClosing = reject));
    this.closing.catch(() => undefined);
  }

  /** Starts one recogniser. */
  protected abstract startWorker(): Promise<W>;
  /** Ends one recogniser, and whatever it is reading; resolves once nothing of it runs. */
  protected abstract endWorker(worker: W): Promise<void>;
  /**
   * Reads an image turned by `rotation` radians about its centre, keeping its size (0: as it is);
   * `owner` is the file it is of (see RecognizeOptions).
   */
  protected abstract read(
    worker: W,
    image: Buffer,
    rotation: number,
    owner: string | undefined,
  ): Promise<RecognisedLine[]>;
  /** Gives back what the engine holds besides its recognisers; called once, by close(). */
  protected abstract release(): Promise<void>;

  get workers(): number {
    return this.slots.length;
  }

  recognize(image: Buffer, options: RecognizeOptions = {}): Promise<OcrPage> {
    if (this.closed) return Promise.reject(new Error("The OCR engine is closed."));
    clearTimeout(this.idleTimer);
    return new Promise<OcrPage>((resolve, reject) => {
      this.queue.push({ image, lean: options.lean, owner: options.owner, resolve, reject });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.idleTimer);
    this.rejectClosing(new Error("The OCR engine is closed."));
    for (const job of this.queue.splice(0)) job.reject(new Error("The OCR engine is closed."));
    await Promise.all(this.slots.map((slot) => this.endSlot(slot)));
    await this.release();
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (slot.busy) continue;
      const job = this.queue.shift();
      if (!job) break;
      slot.busy = true;
      void this.run(slot, job).finally(() => {
        slot.busy = false;
        if (this.queue.length > 0) this.dispatch();
        else if (this.slots.every((s) => !s.busy)) this.armIdleTimer();
      });
    }
  }

  private async run(slot: Slot<W>, job: Job): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    // From when a started recogniser takes the image: its start (once per idle period) is not OCR.
    let readingSince: number | undefined;
    const recognised = (outcome: "ok" | "error") => {
      if (readingSince !== undefined && !this.closed)
        this.observer?.imageRecognised(this.kind, outcome, (performance.now() - readingSince) / 1000);
    };
    try {
      slot.worker ??= this.startWorker();
      const worker = await slot.worker;
      readingSince = performance.now();
      const ceiling = this.limitsProcessorTime ? this.timeoutMs * WALL_PER_CPU : this.timeoutMs;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new OcrTimeoutError(ceiling)), ceiling);
      });
      const page = job.lean === undefined ? readPgm(job.image) : null;
      const lean = job.lean ?? (page ? estimateLean(page) : 0);
      const reading = readStraightened((rotation) => this.read(worker, job.image, rotation, job.owner), lean);
      const read = await Promise.race([reading, timeout, this.closing]);
      recognised("ok");
      job.resolve(read);
    } catch (err) {
      recognised("error");
      // A recogniser that timed out or failed may be stuck or broken: never hand it another image.
      await this.endSlot(slot);
      job.reject(err);
    } finally {
      clearTimeout(timer);
    }
  }

  private async endSlot(slot: Slot<W>): Promise<void> {
    const worker = slot.worker;
    slot.worker = null;
    if (!worker) return;
    await worker.then((w) => this.endWorker(w)).catch(() => undefined);
  }

  private armIdleTimer(): void {
    clearTimeout(this.idleTimer);
    if (this.closed) return;
    this.idleTimer = setTimeout(() => {
      if (this.slots.some((s) => s.busy)) return;
      void Promise.all(this.slots.map((slot) => this.endSlot(slot)));
    }, this.idleMs);
    this.idleTimer.unref();
  }
}

/**
 * Lines whose baselines lean more than this (radians, about 1.1°) are read again with the image
 * turned straight: the recogniser copes with a slight lean, and loses words beyond it.
 */
const SKEW_LIMIT = 0.02;

/**
 * Reads an image turned straight by `lean`, the lean its pixels show (see estimateLean), when that
 * is more than the recogniser copes with; else as it is. When the lines it reads still lean, it
 * reads once more turned by their median lean as well. Tesseract's own straightening (rotateAuto)
 * would analyse the layout of every image twice, a quarter more time for the images that do not
 * need it.
 */
export async function readStraightened(
  read: (rotation: number) => Promise<RecognisedLine[]>,
  lean = 0,
): Promise<OcrPage> {
  // Turning by minus the lean levels the lines; the boxes come back in the turned image.
  const turned = Math.abs(lean) > SKEW_LIMIT ? -lean : 0;
  const first = await read(turned);
  const skew = medianSkew(first);
  if (skew === null || Math.abs(skew) <= SKEW_LIMIT) return { lines: readLines(first), rotation: turned };
  const rotation = turned - skew;
  return { lines: readLines(await read(rotation)), rotation };
}

/** The median angle of the baselines of lines long enough to measure, or null without any. */
function medianSkew(lines: readonly RecognisedLine[]): number | null {
  const angles: number[] = [];
  for (const { baseline } of lines) {
    if (!baseline) continue;
    const run = baseline.x1 - baseline.x0;
    if (run >= 50) angles.push(Math.atan((baseline.y1 - baseline.y0) / run));
  }
  if (angles.length === 0) return null;
  angles.sort((a, b) => a - b);
  return angles[Math.floor(angles.length / 2)] ?? null;
}

function readLines(recognised: readonly RecognisedLine[]): OcrLine[] {
  const lines: OcrLine[] = [];
  for (const line of recognised) {
    const text = line.text.replace(/\s+/g, " ").trim();
    if (text.length === 0) continue;
    const { x0, y0, x1, y1 } = line.bbox;
    lines.push({
      text,
      confidence: Math.max(0, Math.min(1, line.confidence / 100)),
      bbox: { x: x0, y: y0, width: x1 - x0, height: y1 - y0 },
    });
  }
  return lines;
}
