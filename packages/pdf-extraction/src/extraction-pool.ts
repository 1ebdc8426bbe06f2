import { on } from "node:events";
import { MessageChannel } from "node:worker_threads";
import { Piscina } from "piscina";
import { FileRejectedError, type ExtractedPassage } from "@locus/contracts";
import type { PdfReadError, PopplerLimits, PopplerTools, ScannedPage } from "@locus/pdf-reader";
import type { ExtractionTask, ExtractorMessage, WarmUpTask, WorkerMessage } from "./extraction-worker.ts";

export interface PoolOptions {
  threads: number;
  /** A page that takes longer than this stops the extraction: the PDF is stuck or built to stall. */
  pageTimeoutMs: number;
  /** Heap of one worker; a PDF that needs more fails instead of taking the process down. */
  maxHeapMb: number;
  /** Poppler's tools, when PDFs are to be read with them (pdf.js taking over where they fail). */
  poppler?: PopplerTools | undefined;
}

/**
 * Where the worker's own bundle is, relative to this file's source: defined by the build
 * (scripts/build.mjs) when Locus runs as JavaScript (apps/locus/dist), where the worker needs no
 * loader. Undefined when Locus runs from the TypeScript sources, whose worker needs tsx.
 */
declare const LOCUS_PDF_WORKER_BUNDLE: string | undefined;
const WORKER_BUNDLE = typeof LOCUS_PDF_WORKER_BUNDLE === "string" ? LOCUS_PDF_WORKER_BUNDLE : undefined;

export type PoolErrorCode = "pdf_timeout" | "pdf_too_complex";

/** Why the pool gave up on a PDF: a property of the file, so retrying will not help. */
export class PdfRejectedError extends FileRejectedError {
  constructor(code: PoolErrorCode | PdfReadError["code"], message: string) {
    super(code, message);
    this.name = "PdfRejectedError";
  }
}

/** How scanned pages are read: drawn by the worker, read by OCR in this thread. */
export interface ScanReader {
  dpi: number;
  maxPixels: number;
  /** Pages read at once (the OCR engine's recognisers); the worker draws at most this far ahead. */
  window: number;
  /** `owner`: the file the page is of, whose turn its OCR takes with other files' work. */
  read(scan: ScannedPage, owner?: string): Promise<ExtractedPassage[]>;
}

/**
 * A pool of worker threads that read PDFs. Passages stream back over a per-task message port, so
 * the caller writes them out as they come instead of holding the whole extraction.
 */
export class ExtractionPool {
  private readonly pool: Piscina<ExtractionTask | WarmUpTask, void>;

  constructor(private readonly options: PoolOptions) {
    this.pool = new Piscina({
      filename: new URL(WORKER_BUNDLE ?? "./extraction-worker.ts", import.meta.url).href,
      // One thread is kept ready, pdf.js and the lexicon loaded, so that the first PDF after a
      // start (or after a quiet minute) does not wait about a second for a thread to start.
      minThreads: 1,
      maxThreads: options.threads,
      idleTimeout: 60_000,
      resourceLimits: { maxOldGenerationSizeMb: options.maxHeapMb },
      // Run from the sources, the worker is TypeScript: a thread inherits tsx's loader from a
      // process started with `--import tsx` (pnpm start), not from one started otherwise (a test
      // runner building Locus in its own process), which gets it here. The bundle's worker is
      // JavaScript and needs neither.
      execArgv:
        WORKER_BUNDLE !== undefined || process.execArgv.some((arg) => arg.includes("tsx"))
          ? process.execArgv
          : [...process.execArgv, "--import", "tsx"],
    });
  }

  /**
   * Readies the thread the pool keeps (minThreads): started, the lexicon loaded and a small PDF read,
   * so the first file after a start is read at the speed of the later ones (measured: a 15-page
   * PDF's upload to ready took about 0.9 s right after start, 0.16 s once warm).
   */
  warmUp(): Promise<void> {
    return this.pool.run({ warmUp: true });
  }

  /**
   * Extracts the PDF: yields passages in reading order, calls onPage as pages finish, and returns
   * the page count as the generator's final value. Throws PdfRejectedError for files that cannot
   * be read; other errors (a worker that crashed) are worth a retry.
   */
  async *extract(
    data: Uint8Array,
    onPage: (page: number, pageCount: number) => void,
    scans?: ScanReader,
    onFallback?: (reason: string) => void,
  ): AsyncGenerator<ExtractedPassage, number> {
    const { port1, port2 } = new MessageChannel();
    const abort = new AbortController();
    let timedOut = false;
    let watchdog: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => {
        timedOut = true;
        abort.abort();
      }, this.options.pageTimeoutMs);
    };

    const pause = () => clearTimeout(watchdog);
    // Scanned pages being read, oldest first; each tells the worker when it is done.
    const reading: Promise<ExtractedPassage[]>[] = [];
    const startReading = (scan: ScannedPage, reader: ScanReader) => {
      const done = reader.read(scan).finally(() => {
        if (!abort.signal.aborted) port1.postMessage({ type: "read" } satisfies ExtractorMessage);
      });
      // Read in the background: a failure is rethrown where the result is awaited.
      done.catch(() => undefined);
      reading.push(done);
    };

    const task = this.pool.run(
      {
        data,
        port: port2,
        ...(scans ? { scans: { dpi: scans.dpi, maxPixels: scans.maxPixels, window: scans.window } } : {}),
        ...(this.options.poppler
          ? { poppler: { tools: this.options.poppler, limits: this.popplerLimits } }
          : {}),
      },
      { transferList: [port2, data.buffer as ArrayBuffer], signal: abort.signal },
    );
    // If the worker dies (crash, heap limit, timeout), stop waiting for its messages.
    const failure = task.then(
      () => null,
      (err: unknown) => {
        abort.abort();
        return err;
      },
    );

    let finished = false;
    try {
      // The watchdog starts with the worker's first word, so a cold thread's start-up is not held
      // against the file; each message then re-arms it.
      for await (const [message] of on(port1, "message", { signal: abort.signal }) as AsyncIterable<
        [WorkerMessage]
      >) {
        arm();
        switch (message.type) {
          case "started":
            break;
          case "page":
            onPage(message.page, message.pageCount);
            break;
          case "fallback":
            onFallback?.(message.reason);
            break;
          case "passages":
            yield* message.passages;
            break;
          case "scan":
            if (!scans) throw new Error("PDF worker sent a scanned page that nobody asked for");
            startReading(message.scan, scans);
            // The worker waits once the window is full; so does this loop, for the oldest page.
            // OCR has its own time limit: the page watchdog is for the worker, which is idle now.
            while (reading.length >= scans.window) {
              pause();
              yield* await (reading.shift() as Promise<ExtractedPassage[]>);
              arm();
            }
            break;
          case "done":
            pause();
            for (const pending of reading.splice(0)) yield* await pending;
            finished = true;
            return message.pageCount;
          case "unreadable":
            finished = true;
            throw new PdfRejectedError(message.code, message.message);
        }
      }
      throw new Error("PDF worker ended without a result");
    } catch (err) {
      if (err instanceof FileRejectedError) throw err;
      if (timedOut) {
        throw new PdfRejectedError(
          "pdf_timeout",
          `Reading a page of this PDF took longer than ${Math.round(this.options.pageTimeoutMs / 1000)} s; the file may be damaged or built to stall readers.`,
        );
      }
      // Aborted already: the worker failed (crash, heap limit) and `failure` says why. Otherwise
      // the failure is this side's (a scanned page the OCR could not read): the worker is ended
      // first, since one waiting for the answers to its scanned pages would wait for ever.
      const workerFailed = abort.signal.aborted;
      abort.abort();
      const cause = await failure;
      if ((cause as { code?: string } | null)?.code === "ERR_WORKER_OUT_OF_MEMORY") {
        throw new PdfRejectedError(
          "pdf_too_complex",
          "This PDF needs more memory to read than Locus allows for one file.",
        );
      }
      throw workerFailed ? (cause ?? err) : err;
    } finally {
      clearTimeout(watchdog);
      // A task that sent everything ends by itself; one we gave up on (or whose reader stopped
      // early) is aborted, which ends its thread.
      if (!finished) abort.abort();
      port1.close();
      await failure;
    }
  }

  /**
   * The kernel's bounds on one Poppler tool: the thread's heap limit plus room for the tool's own
   * code, and processor time far past what the pool's page watchdog allows a page, so that the
   * watchdog speaks first for a slow file, while a tool left behind by a thread the pool ended is
   * still stopped (it also loses its output pipe with the thread, and ends at its next write).
   * Processor time, not wall-clock time: a tool waiting for a core on a busy machine is not stopped.
   */
  private get popplerLimits(): PopplerLimits {
    return {
      maxMemoryBytes: (this.options.maxHeapMb + 512) * 1024 * 1024,
      maxSeconds: Math.max(60, (4 * this.options.pageTimeoutMs) / 1000),
    };
  }

  destroy(): Promise<void> {
    return this.pool.destroy();
  }
}
