import type { ExtractedPassage } from "@locus/contracts";
import { makeScannedPdf } from "@locus/testing";
import { ExtractionPool, type ScanReader } from "../src/index.ts";

/**
 * The PDF reader's threads with a stand-in OCR (a ScanReader that fails where told): a scanned page
 * the OCR cannot read fails the file at once, whatever else the thread had drawn by then, and
 * leaves the pool able to read the next file. Before #35 the thread, still waiting for answers
 * about its other scanned pages, was never ended: the file hung in `processing` for good, its
 * heartbeat keeping the stall sweep away.
 */
let pool: ExtractionPool;

beforeAll(() => {
  pool = new ExtractionPool({ threads: 1, pageTimeoutMs: 30_000, maxHeapMb: 512 });
});
afterAll(() => pool.destroy());

/** Reads every passage of `pdf`, to the page count or the error it ends with. */
async function read(pdf: Buffer, scans: ScanReader): Promise<number> {
  const passages = pool.extract(new Uint8Array(pdf), () => undefined, scans);
  for (;;) {
    const next = await passages.next();
    if (next.done) return next.value;
  }
}

const reader = (failOn: number | null): ScanReader => ({
  dpi: 72,
  maxPixels: 50_000_000,
  window: 2,
  read: (scan) =>
    scan.page === failOn
      ? Promise.reject(new Error(`the recogniser crashed on page ${scan.page}`))
      : Promise.resolve<ExtractedPassage[]>([]),
});

it("fails at once on a scanned page the OCR cannot read, with the OCR's error, and reads the next file", async () => {
  const pdf = await makeScannedPdf(
    Array.from({ length: 12 }, (_, i) => [`Ledger page ${i + 1}`]),
    { dpi: 72 },
  );
  await expect(read(pdf, reader(1))).rejects.toThrow("the recogniser crashed on page 1");
  // The thread was ended and replaced: the same file with a working OCR reads to its end.
  expect(await read(pdf, reader(null))).toBe(12);
}, 60_000);
