import type { MessagePort } from "node:worker_threads";
import type { ExtractedPassage } from "@locus/contracts";
// The lexicon alone: the package's index would load the OpenAI client into every thread.
import { loadLexicon } from "@locus/embedder/lexicon";
import {
  extractPdf,
  PdfReadError,
  type PopplerLimits,
  type PopplerTools,
  type ScannedPage,
} from "@locus/pdf-reader";
import type { Lexicon } from "@locus/passages";
import { warmUpPdf } from "./warm-up-pdf.ts";

/** What the worker tells the extractor, in order, on the task's own port. */
export type WorkerMessage =
  | { type: "started" }
  | { type: "page"; page: number; pageCount: number }
  | { type: "passages"; passages: ExtractedPassage[] }
  /** A page without a real text layer, drawn for OCR; the extractor answers "read" when done. */
  | { type: "scan"; scan: ScannedPage }
  /** Poppler could not read the file (or the rest of it); pdf.js did. */
  | { type: "fallback"; reason: string }
  | { type: "done"; pageCount: number }
  | { type: "unreadable"; code: PdfReadError["code"]; message: string };

/** What the extractor tells the worker: a scanned page has been read. */
export interface ExtractorMessage {
  type: "read";
}

export interface ExtractionTask {
  data: Uint8Array;
  port: MessagePort;
  /** When set, scanned pages are drawn at this resolution and sent for OCR. */
  scans?: {
    dpi: number;
    maxPixels: number;
    /** Scanned pages sent and not yet read beyond which the worker waits. */
    window: number;
  };
  /** Read with Poppler's tools where installed and chosen (LOCUS_PDF_ENGINE); else pdf.js. */
  poppler?: { tools: PopplerTools; limits: PopplerLimits };
}

const BATCH = 200;

/** The task that readies a new thread before any file: see ExtractionPool.warmUp. */
export interface WarmUpTask {
  warmUp: true;
}

/**
 * The lexicon that tells a word broken at a line end from a compound, loaded once per thread
 * (about 0.3 s, 20 MB). Without it (the word list missing) every break is joined.
 */
let lexicon: Promise<Lexicon | undefined> | undefined;
const threadLexicon = () => (lexicon ??= loadLexicon().catch(() => undefined));

/** Loads the lexicon and reads a small built-in PDF, so the thread's first file finds it warm. */
async function warmUp(): Promise<void> {
  const words = await threadLexicon();
  const extraction = await extractPdf(warmUpPdf(), words ? { lexicon: words } : {});
  for await (const _passage of extraction.passages) {
    // read and dropped: only the reading matters
  }
}

/**
 * Runs in a worker thread: pdf.js parses on the thread that calls it, so a large or hostile PDF
 * here never stalls the HTTP server, and a stuck or bloated one can be stopped by ending the thread.
 */
export default async function extractInWorker(task: ExtractionTask | WarmUpTask): Promise<void> {
  if ("warmUp" in task) return warmUp();
  const { data, port, scans, poppler } = task;
  const send = (message: WorkerMessage, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);
  // Scanned pages are read by OCR in the extractor; drawing runs at most `window` pages ahead of it,
  // so a long scan never piles up drawn pages in memory.
  let unread = 0;
  let wake: (() => void) | undefined;
  port.on("message", (message: ExtractorMessage) => {
    if (message.type !== "read") return;
    unread -= 1;
    wake?.();
  });
  const words = await threadLexicon();
  // The thread is up and pdf.js loaded: from here on, time counts against the PDF.
  send({ type: "started" });
  try {
    const extraction = await extractPdf(data, {
      ...(words ? { lexicon: words } : {}),
      onPage: (page, pageCount) => send({ type: "page", page, pageCount }),
      ...(poppler
        ? { poppler: { ...poppler, onFallback: (reason) => send({ type: "fallback", reason }) } }
        : {}),
      ...(scans
        ? {
            scans: {
              dpi: scans.dpi,
              maxPixels: scans.maxPixels,
              onScannedPage: async (scan) => {
                send({ type: "scan", scan }, [scan.grey.buffer as ArrayBuffer]);
                unread += 1;
                while (unread >= scans.window) await new Promise<void>((resolve) => (wake = resolve));
              },
            },
          }
        : {}),
    });
    let batch: ExtractedPassage[] = [];
    for await (const passage of extraction.passages) {
      batch.push(passage);
      if (batch.length >= BATCH) {
        send({ type: "passages", passages: batch });
        batch = [];
      }
    }
    if (batch.length > 0) send({ type: "passages", passages: batch });
    send({ type: "done", pageCount: extraction.pageCount });
  } catch (err) {
    if (err instanceof PdfReadError) send({ type: "unreadable", code: err.code, message: err.message });
    else throw err;
  } finally {
    port.close();
  }
}
