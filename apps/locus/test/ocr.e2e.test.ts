import {
  client,
  createUserWithKey,
  makeMultiPageTiff,
  makePdf,
  makeScannedPdf,
  makeTextImage,
  removeDataDir,
  startLocus,
  waitForFile,
  type LocusProcess,
} from "@locus/testing";

/**
 * OCR through the running server: a scanned PDF reports how far it is while its pages are read,
 * and a PDF with a text layer uploaded after it is not held up behind it; an image that takes too
 * long fails with a reason and the server reads on; a TIFF's pages are pages; turning PDF OCR off
 * leaves scanned pages unread.
 */
const pageOf = (n: number) => [
  `Scanned page ${n} of the harbour survey`,
  n === 5 ? "The lighthouse keeper logged a storm" : "Nothing unusual was logged",
];

describe("scanned PDFs (OCR in the running server)", () => {
  let locus: LocusProcess;
  beforeAll(async () => {
    locus = await startLocus({ env: { LOCUS_RATE_LIMIT_PRO: "1000" } });
  }, 180_000);
  afterAll(async () => {
    expect(await locus.stop()).toBe(0);
    removeDataDir(locus.dataDir);
  });

  it("reports progress while a long scan is read, and other files keep moving", async () => {
    const { key } = await createUserWithKey(locus.dataDir, { plan: "pro" });
    const c = client(locus.baseUrl, key);
    const scan = await makeScannedPdf(Array.from({ length: 10 }, (_, i) => pageOf(i + 1)));
    const { file } = (await (await c.upload(scan, "survey.pdf")).json()) as { file: { id: string } };
    const { file: text } = (await (
      await c.upload(await makePdf({ pages: [["A born-digital page on herons."]] }), "herons.pdf")
    ).json()) as { file: { id: string } };

    // Poll the scan: somewhere between its first and last page, progress lies strictly between 0 and 1.
    const seen: number[] = [];
    let textReadyWhileScanning = false;
    for (const deadline = Date.now() + 120_000; Date.now() < deadline;) {
      const record = (await (await c.get(`/api/files/${file.id}`)).json()) as {
        status: string;
        progress: number | null;
      };
      if (record.status === "ready" || record.status === "failed") break;
      if (record.progress !== null) seen.push(record.progress);
      if (!textReadyWhileScanning) {
        const other = (await (await c.get(`/api/files/${text.id}`)).json()) as { status: string };
        textReadyWhileScanning = other.status === "ready";
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(seen.some((p) => p > 0 && p < 1)).toBe(true);
    expect([...seen].sort((a, b) => a - b)).toEqual(seen); // never goes backwards
    expect(textReadyWhileScanning).toBe(true);

    const done = await waitForFile(c, file.id, 5_000);
    expect(done).toMatchObject({ status: "ready", page_count: 10, progress: 1 });
    const body = (await (await c.get("/api/search?q=lighthouse%20keeper")).json()) as {
      results: { file_id: string; locator: { page: number; line: number; source: string } }[];
    };
    expect(body.results[0]).toMatchObject({ file_id: file.id, locator: { page: 5, line: 2, source: "ocr" } });
  }, 180_000);
});

describe("images through the running server", () => {
  let locus: LocusProcess;
  beforeAll(async () => {
    // A limit of processor time no real page stays under, so that every image here runs into it.
    locus = await startLocus({ env: { LOCUS_RATE_LIMIT_PRO: "1000", LOCUS_OCR_TIMEOUT_MS: "150" } });
  }, 180_000);
  afterAll(async () => {
    expect(await locus.stop()).toBe(0);
    removeDataDir(locus.dataDir);
  });

  it("fails an image whose reading takes too long, and goes on serving", async () => {
    const { key } = await createUserWithKey(locus.dataDir, { plan: "pro" });
    const c = client(locus.baseUrl, key);
    const page = await makeTextImage({
      lines: Array.from({ length: 40 }, (_, i) => `Line ${i} of a long page`),
    });
    const { file } = (await (await c.upload(page.data, "long.png")).json()) as { file: { id: string } };
    const failed = await waitForFile(c, file.id);
    expect(failed).toMatchObject({ status: "failed", error: { code: "ocr_timeout" } });
    expect((failed.error as { message: string }).message).toMatch(
      /used more than [\d.]+ s of processor time/,
    );
    // The recogniser that was stopped is replaced: the server still answers and still reads.
    expect((await c.get("/api/files")).status).toBe(200);
    const text = await makePdf({ pages: [["A page with a text layer about otters."]] });
    const { file: ok } = (await (await c.upload(text, "otters.pdf")).json()) as { file: { id: string } };
    expect(await waitForFile(c, ok.id)).toMatchObject({ status: "ready" });
  }, 60_000);
});

describe("a multi-page TIFF", () => {
  it("is read page by page, each result on its page", async () => {
    const locus = await startLocus();
    try {
      const { key } = await createUserWithKey(locus.dataDir, { plan: "pro" });
      const c = client(locus.baseUrl, key);
      // sharp writes a TIFF's first directory after its pages, past the bytes sniffed at upload:
      // the upload must still be taken for a TIFF.
      const tiff = await makeMultiPageTiff([
        ["Fax cover sheet for the shipping office"],
        ["The container arrives at berth nine"],
        ["Signed by the harbour master"],
      ]);
      const { file } = (await (await c.upload(tiff, "fax.tif")).json()) as { file: { id: string } };
      expect(await waitForFile(c, file.id)).toMatchObject({
        status: "ready",
        file_type: "image",
        mime_type: "image/tiff",
        page_count: 3,
      });
      const body = (await (await c.get("/api/search?q=berth")).json()) as {
        results: { file_id: string; locator: { page: number; line: number; source: string } }[];
      };
      expect(body.results[0]).toMatchObject({
        file_id: file.id,
        locator: { page: 2, line: 1, source: "ocr" },
      });
    } finally {
      expect(await locus.stop()).toBe(0);
      removeDataDir(locus.dataDir);
    }
  }, 60_000);
});

describe("with LOCUS_PDF_OCR=false", () => {
  it("leaves scanned pages unread and still reads text layers", async () => {
    const locus = await startLocus({ env: { LOCUS_PDF_OCR: "false" } });
    try {
      const { key } = await createUserWithKey(locus.dataDir, { plan: "pro" });
      const c = client(locus.baseUrl, key);
      const scan = await makeScannedPdf([pageOf(1)]);
      const { file } = (await (await c.upload(scan, "scan.pdf")).json()) as { file: { id: string } };
      expect(await waitForFile(c, file.id)).toMatchObject({ status: "ready", passage_count: 0 });
    } finally {
      expect(await locus.stop()).toBe(0);
      removeDataDir(locus.dataDir);
    }
  }, 60_000);
});
