import {
  client,
  createUserWithKey,
  makePdf,
  pageWith,
  removeDataDir,
  startLocus,
  waitForFile,
  type LocusProcess,
} from "@locus/testing";

/** A 1,000-page PDF goes through the same path as a one-page one (its speed is in `pnpm bench`). */
let locus: LocusProcess;
beforeAll(async () => {
  locus = await startLocus();
}, 180_000);
// The meaning stage may still be encoding the thousand pages' passages (about 2,000): a stop ends
// it after the page of passages in hand (Delivery.signal), so this takes seconds, not minutes.
afterAll(async () => {
  await locus.stop();
  removeDataDir(locus.dataDir);
}, 60_000);

it("indexes every page of a 1,000-page PDF", async () => {
  const pages = Array.from({ length: 1000 }, (_, i) =>
    i === 999
      ? pageWith("The final page mentions a solitary pangolin.", 21, 25)
      : pageWith(`Page ${i + 1}.`, 1, 25),
  );
  const pdf = await makePdf({ pages });
  const { key } = await createUserWithKey(locus.dataDir, { plan: "pro" });
  const c = client(locus.baseUrl, key);
  const res = await c.upload(pdf, "thousand.pdf");
  expect(res.status).toBe(200);
  const { file } = (await res.json()) as { file: { id: string } };
  const done = await waitForFile(c, file.id, 120_000);
  expect(done).toMatchObject({ status: "ready", page_count: 1000 });
  const body = (await (await c.get("/api/search?q=solitary%20pangolin")).json()) as {
    results: { locator: unknown }[];
  };
  expect(body.results[0]?.locator).toMatchObject({ page: 1000, line: 21, line_end: 21, source: "text" });
}, 180_000);
