import type { MessagePort } from "node:worker_threads";
import type { ExtractedPassage } from "@locus/contracts";
import { extractPdf, PdfReadError } from "@locus/extract-pdf";

/** What the worker tells the extractor, in order, on the task's own port. */
export type WorkerMessage =
  | { type: "started" }
  | { type: "page"; page: number; pageCount: number }
  | { type: "passages"; passages: ExtractedPassage[] }
  | { type: "done"; pageCount: number }
  | { type: "unreadable"; code: PdfReadError["code"]; message: string };

export interface ExtractionTask {
  data: Uint8Array;
  port: MessagePort;
}

const BATCH = 200;

/**
 * Runs in a worker thread: pdf.js parses on the thread that calls it, so a large or hostile PDF
 * here never stalls the HTTP server, and a stuck or bloated one can be stopped by ending the thread.
 */
export default async function extractInWorker({ data, port }: ExtractionTask): Promise<void> {
  const send = (message: WorkerMessage) => port.postMessage(message);
  // The thread is up and pdf.js loaded: from here on, time counts against the PDF.
  send({ type: "started" });
  try {
    const extraction = await extractPdf(data, {
      onPage: (page, pageCount) => send({ type: "page", page, pageCount }),
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
