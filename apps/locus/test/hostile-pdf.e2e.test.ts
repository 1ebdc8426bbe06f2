import { findPoppler } from "@locus/pdf-reader";
import {
  client,
  createUserWithKey,
  makePdf,
  makeSlowPdf,
  removeDataDir,
  startLocus,
  waitForFile,
  type LocusProcess,
} from "@locus/testing";

/**
 * PDFs are read in worker threads with a per-page time limit: a PDF built to stall the reader
 * (here a page that takes pdf.js seconds to read, against a 2 s limit; small pages take
 * milliseconds) ends `failed` with a reason, the server keeps answering, and other files keep
 * moving. Poppler reads the same page much faster (under a second on an idle machine): with it,
 * the file ends `ready`.
 */
describe("a PDF page that stalls pdf.js", () => {
  let locus: LocusProcess;
  beforeAll(async () => {
    locus = await startLocus({
      env: { LOCUS_PDF_ENGINE: "pdfjs", LOCUS_PDF_PAGE_TIMEOUT_MS: "2000", LOCUS_RATE_LIMIT_PRO: "1000" },
    });
  }, 180_000);
  afterAll(async () => {
    expect(await locus.stop()).toBe(0);
    removeDataDir(locus.dataDir);
  });

  it("fails the PDF once the page takes too long, while other files and requests go on", async () => {
    const { key } = await createUserWithKey(locus.dataDir, { plan: "pro" });
    const c = client(locus.baseUrl, key);
    const slow = (await (await c.upload(await makeSlowPdf(200_000), "stall.pdf")).json()) as {
      file: { id: string };
    };
    const quick = (await (
      await c.upload(await makePdf({ pages: [["A short page on lynxes."]] }), "ok.pdf")
    ).json()) as {
      file: { id: string };
    };

    // The HTTP side answers while the worker is busy.
    expect((await c.get("/api/files")).status).toBe(200);

    expect(await waitForFile(c, quick.file.id)).toMatchObject({ status: "ready" });
    const failed = await waitForFile(c, slow.file.id);
    expect(failed).toMatchObject({ status: "failed", error: { code: "pdf_timeout" } });
    expect((failed.error as { message: string }).message).toMatch(/took longer than/);
  }, 60_000);
});

const withPoppler = findPoppler() ? describe : describe.skip;
withPoppler(
  `the same PDF read with Poppler's tools${findPoppler() ? "" : " (SKIPPED: poppler-utils is not installed)"}`,
  () => {
    let locus: LocusProcess;
    beforeAll(async () => {
      locus = await startLocus({
        // The default page limit: how fast the page is read depends on the machine (a busy CI
        // runner took over 2 s); what is tested is that Poppler reads what stalls pdf.js.
        env: { LOCUS_PDF_ENGINE: "poppler", LOCUS_RATE_LIMIT_PRO: "1000" },
      });
    }, 180_000);
    afterAll(async () => {
      expect(await locus.stop()).toBe(0);
      removeDataDir(locus.dataDir);
    });

    it("is read, and ends ready with its page", async () => {
      const { key } = await createUserWithKey(locus.dataDir, { plan: "pro" });
      const c = client(locus.baseUrl, key);
      const slow = (await (await c.upload(await makeSlowPdf(200_000), "stall.pdf")).json()) as {
        file: { id: string };
      };
      expect(await waitForFile(c, slow.file.id)).toMatchObject({ status: "ready", page_count: 1 });
    }, 60_000);
  },
);
