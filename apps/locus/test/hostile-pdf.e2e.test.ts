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
 * (here a page that takes seconds to read, against a 2 s limit; small pages take milliseconds)
 * ends `failed` with a reason, the server keeps answering, and other files keep moving.
 */
let locus: LocusProcess;
beforeAll(async () => {
  locus = await startLocus({ env: { LOCUS_PDF_PAGE_TIMEOUT_MS: "2000", LOCUS_RATE_LIMIT_PRO: "1000" } });
}, 180_000);
afterAll(async () => {
  expect(await locus.stop()).toBe(0);
  removeDataDir(locus.dataDir);
});

it("fails a PDF whose page takes too long to read, while other files and requests go on", async () => {
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
