import { availableParallelism } from "node:os";
import { createWorker, OEM, type Worker } from "tesseract.js";
import { languageFolder } from "./languages.ts";

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

export interface OcrEngineOptions {
  /** Tesseract language codes, each from its `@tesseract.js-data/<code>` package. */
  languages: readonly string[];
  /** Recognisers kept at once; each is a thread with its own copy of the model (~150–250 MB). */
  workers?: number;
  /** One image taking longer than this is given up: its recogniser is ended and replaced. */
  timeoutMs?: number;
  /** Recognisers idle this long are ended, giving their memory back; the next image starts one. */
  idleMs?: number;
}

/** An image the recogniser gave up on; a property of the image, so retrying will not help. */
export class OcrTimeoutError extends Error {
  readonly code = "ocr_timeout";
  constructor(readonly timeoutMs: number) {
    super(`Reading the text of one image took longer than ${Math.round(timeoutMs / 1000)} s.`);
    this.name = "OcrTimeoutError";
  }
}

interface Job {
  image: Buffer;
  resolve: (page: OcrPage) => void;
  reject: (err: unknown) => void;
}

interface Slot {
  worker: Promise<Worker> | null;
  busy: boolean;
}

/** The shape of tesseract.js's `blocks` output that Locus reads. */
interface TessBox {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}
interface TessLine {
  text: string;
  confidence: number;
  bbox: TessBox;
  baseline: TessBox;
}
interface TessBlock {
  paragraphs: { lines: TessLine[] }[];
}

/**
 * A pool of tesseract.js recognisers shared by every extractor of the process: started on first
 * use (a process that never sees an image pays nothing), reused across files, each image queued
 * until one is free. The language models are found when the engine is made, so a missing package
 * stops the process at start-up rather than failing files later.
 */
export class OcrEngine {
  private readonly slots: Slot[];
  private readonly queue: Job[] = [];
  private readonly languages: string[];
  private readonly langFolder: { path: string; remove: () => void };
  private readonly timeoutMs: number;
  private readonly idleMs: number;
  private idleTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: OcrEngineOptions) {
    this.languages = [...new Set(options.languages)];
    this.langFolder = languageFolder(this.languages);
    const workers = options.workers ?? Math.max(1, availableParallelism());
    this.slots = Array.from({ length: workers }, () => ({ worker: null, busy: false }));
    this.timeoutMs = options.timeoutMs ?? 120_000;
    this.idleMs = options.idleMs ?? 5 * 60_000;
  }

  get workers(): number {
    return this.slots.length;
  }

  /** Reads the lines of an image (PGM, PNG, JPEG, or another format Leptonica reads). */
  recognize(image: Buffer): Promise<OcrPage> {
    if (this.closed) return Promise.reject(new Error("The OCR engine is closed."));
    clearTimeout(this.idleTimer);
    return new Promise<OcrPage>((resolve, reject) => {
      this.queue.push({ image, resolve, reject });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.idleTimer);
    for (const job of this.queue.splice(0)) job.reject(new Error("The OCR engine is closed."));
    await Promise.all(this.slots.map((slot) => this.endWorker(slot)));
    this.langFolder.remove();
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

  private async run(slot: Slot, job: Job): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    try {
      slot.worker ??= this.startWorker();
      const worker = await slot.worker;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new OcrTimeoutError(this.timeoutMs)), this.timeoutMs);
      });
      job.resolve(await Promise.race([readStraightened(worker, job.image), timeout]));
    } catch (err) {
      // A recogniser that timed out or failed may be stuck or broken: never hand it another image.
      await this.endWorker(slot);
      job.reject(err);
    } finally {
      clearTimeout(timer);
    }
  }

  private async startWorker(): Promise<Worker> {
    const worker = await createWorker(this.languages, OEM.LSTM_ONLY, {
      langPath: this.langFolder.path,
      gzip: true,
      // The models are read from their packages each time; never written next to the process.
      cacheMethod: "none",
    });
    // The pages handed over carry no resolution Tesseract trusts; without one it guesses, and says
    // so on stderr for every image.
    await worker.setParameters({ user_defined_dpi: "300" });
    return worker;
  }

  private async endWorker(slot: Slot): Promise<void> {
    const worker = slot.worker;
    slot.worker = null;
    if (!worker) return;
    await worker.then((w) => w.terminate()).catch(() => undefined);
  }

  private armIdleTimer(): void {
    clearTimeout(this.idleTimer);
    if (this.closed) return;
    this.idleTimer = setTimeout(() => {
      if (this.slots.some((s) => s.busy)) return;
      void Promise.all(this.slots.map((slot) => this.endWorker(slot)));
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
 * Reads an image as it is, then, when its lines lean (a photo or a scan fed in askew), once more
 * turned straight by their median lean. Tesseract's own straightening (rotateAuto) would analyse
 * the layout of every image twice, a quarter more time for the images that do not need it.
 */
async function readStraightened(worker: Worker, image: Buffer): Promise<OcrPage> {
  const first = await worker.recognize(image, {}, { blocks: true, text: false });
  const skew = medianSkew(first.data.blocks);
  if (skew === null || Math.abs(skew) <= SKEW_LIMIT) {
    return { lines: readLines(first.data.blocks), rotation: 0 };
  }
  // Turning by minus the lean levels the lines; the boxes come back in the turned image.
  const rotation = -skew;
  const second = await worker.recognize(image, { rotateRadians: rotation }, { blocks: true, text: false });
  return { lines: readLines(second.data.blocks), rotation };
}

/** The median angle of the baselines of lines long enough to measure, or null without any. */
function medianSkew(blocks: TessBlock[] | null): number | null {
  const angles: number[] = [];
  for (const block of blocks ?? []) {
    for (const paragraph of block.paragraphs) {
      for (const { baseline } of paragraph.lines) {
        const run = baseline.x1 - baseline.x0;
        if (run >= 50) angles.push(Math.atan((baseline.y1 - baseline.y0) / run));
      }
    }
  }
  if (angles.length === 0) return null;
  angles.sort((a, b) => a - b);
  return angles[Math.floor(angles.length / 2)] ?? null;
}

function readLines(blocks: TessBlock[] | null): OcrLine[] {
  const lines: OcrLine[] = [];
  for (const block of blocks ?? []) {
    for (const paragraph of block.paragraphs) {
      for (const line of paragraph.lines) {
        const text = line.text.replace(/\s+/g, " ").trim();
        if (text.length === 0) continue;
        const { x0, y0, x1, y1 } = line.bbox;
        lines.push({
          text,
          confidence: Math.max(0, Math.min(1, line.confidence / 100)),
          bbox: { x: x0, y: y0, width: x1 - x0, height: y1 - y0 },
        });
      }
    }
  }
  return lines;
}
