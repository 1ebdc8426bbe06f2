import { rmSync } from "node:fs";
import { join } from "node:path";
import {
  client,
  createUserWithKey,
  makePdf,
  pageWith,
  removeDataDir,
  runCli,
  startLocus,
  tempDataDir,
  waitForFile,
} from "@locus/testing";

/** `pnpm locus index rebuild` re-creates the search index from stored extractions, extracting nothing. */
const dataDir = tempDataDir();
afterAll(() => removeDataDir(dataDir));

it("brings back a lost embedded index without extracting again", async () => {
  const first = await startLocus({ dataDir });
  const { key } = await createUserWithKey(dataDir, { plan: "pro" });
  let c = client(first.baseUrl, key);
  let before: { updated_at: string; passage_count: number };
  let fileId = "";
  try {
    const res = await c.upload(
      await makePdf({ pages: [pageWith("A heron rebuilt from its extraction.", 6)] }),
      "r.pdf",
    );
    fileId = ((await res.json()) as { file: { id: string } }).file.id;
    before = (await waitForFile(c, fileId)) as unknown as typeof before;
  } finally {
    await first.stop();
  }
  rmSync(join(dataDir, "index.sqlite"), { force: true });
  rmSync(join(dataDir, "index.sqlite-wal"), { force: true });
  rmSync(join(dataDir, "index.sqlite-shm"), { force: true });

  const rebuilt = await runCli(dataDir, ["index", "rebuild"]);
  expect(rebuilt.code).toBe(0);
  expect(rebuilt.stdout).toMatch(
    /Rebuilt the sqlite search index from 1 stored extractions \(\d+ passages\)/,
  );

  const second = await startLocus({ dataDir });
  try {
    c = client(second.baseUrl, key);
    const body = (await (await c.get("/api/search?q=heron%20rebuilt")).json()) as {
      results: { file_id: string; locator: unknown }[];
    };
    expect(body.results[0]).toMatchObject({ file_id: fileId, locator: { page: 1, line: 6, line_end: 6 } });
    const after = (await (await c.get(`/api/files/${fileId}`)).json()) as typeof before;
    // Nothing was processed again: the record is untouched.
    expect(after).toMatchObject({ updated_at: before.updated_at, passage_count: before.passage_count });
  } finally {
    await second.stop();
  }
}, 120_000);
