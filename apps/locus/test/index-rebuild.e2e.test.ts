import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import {
  client,
  createUserWithKey,
  makePdf,
  pageWith,
  PARAPHRASES,
  removeDataDir,
  runCli,
  startLocus,
  tempDataDir,
  waitForFile,
  waitForMeaning,
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
    expect((await waitForFile(c, fileId)).status).toBe("ready");
    // And encoded by the meaning stage, so that the record is final before the index is lost.
    before = (await waitForMeaning(c, fileId)) as unknown as typeof before;
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

it("gives vectors to passages indexed without them (before ai mode), so ai mode finds paraphrases", async () => {
  const dir = tempDataDir();
  const statement = PARAPHRASES[21]!; // the overheated engine
  try {
    const locus = await startLocus({ dataDir: dir });
    const { key } = await createUserWithKey(dir, { plan: "pro" });
    const c = client(locus.baseUrl, key);
    const ask = async () =>
      (
        (await (await c.get(`/api/search?q=${encodeURIComponent(statement.question)}&mode=ai`)).json()) as {
          results: { file_id: string }[];
        }
      ).results.map((r) => r.file_id);
    let fileId = "";
    try {
      const res = await c.upload(await makePdf({ pages: [[statement.statement]] }), "car.pdf");
      fileId = ((await res.json()) as { file: { id: string } }).file.id;
      await waitForFile(c, fileId);
      expect(await ask()).toEqual([fileId]);
    } finally {
      await locus.stop();
    }
    // As an index written by the release before ai mode holds them: passages without vectors.
    const db = new BetterSqlite3(join(dir, "index.sqlite"));
    db.exec("UPDATE passages SET local_space = NULL, local_vector = NULL");
    db.close();

    const again = await startLocus({ dataDir: dir });
    try {
      const c2 = client(again.baseUrl, key);
      const askAgain = async () =>
        (
          (await (
            await c2.get(`/api/search?q=${encodeURIComponent(statement.question)}&mode=ai`)
          ).json()) as {
            results: { file_id: string }[];
          }
        ).results.map((r) => r.file_id);
      // No shared word and no vector: nothing to find it by.
      expect(await askAgain()).toEqual([]);
      const rebuilt = await runCli(dir, ["index", "rebuild"]);
      expect(rebuilt.code).toBe(0);
      expect(await askAgain()).toEqual([fileId]);
    } finally {
      await again.stop();
    }
  } finally {
    removeDataDir(dir);
  }
}, 120_000);

/**
 * `pnpm locus files reextract`: what a rebuild cannot fix (text extracted by an older extractor)
 * comes right by extracting the stored original again.
 */
it("extracts ready files again from their originals, which a rebuild of the index does not", async () => {
  const dir = tempDataDir();
  try {
    const first = await startLocus({ dataDir: dir });
    const { key, userId } = await createUserWithKey(dir, { plan: "pro" });
    let c = client(first.baseUrl, key);
    let fileId = "";
    try {
      const pdf = await makePdf({ pages: [["A heron nests where we deter-", "mine the tide."]] });
      fileId = ((await (await c.upload(pdf, "tide.pdf")).json()) as { file: { id: string } }).file.id;
      await waitForFile(c, fileId);
    } finally {
      await first.stop();
    }
    // As an extractor before words were mended at line ends stored it: the word in two pieces.
    expect(userId).toBeDefined();
    const extraction = join(dir, "blobs", "extractions", userId ?? "", `${fileId}.jsonl`);
    writeFileSync(
      extraction,
      `${JSON.stringify({
        content: "A heron nests where we deter-\nmine the tide.",
        locator: { page: 1, line: 1, line_end: 2, source: "text" },
      })}\n`,
    );
    expect((await runCli(dir, ["index", "rebuild"])).code).toBe(0);
    const rebuilt = await startLocus({ dataDir: dir });
    try {
      c = client(rebuilt.baseUrl, key);
      const body = (await (await c.get("/api/search?q=determine")).json()) as { count: number };
      expect(body.count).toBe(0);
    } finally {
      await rebuilt.stop();
    }

    const reextract = await runCli(dir, ["files", "reextract", "--kind", "pdf"]);
    expect(reextract.code).toBe(0);
    expect(reextract.stdout).toMatch(/Marked 1 ready files to be extracted again/);

    const second = await startLocus({ dataDir: dir });
    try {
      c = client(second.baseUrl, key);
      const done = await waitForFile(c, fileId);
      expect(done).toMatchObject({ status: "ready" });
      const body = (await (await c.get("/api/search?q=determine")).json()) as {
        results: { file_id: string; locator: { line: number; line_end: number; bbox?: unknown } }[];
      };
      expect(body.results[0]).toMatchObject({ file_id: fileId, locator: { line: 1, line_end: 2 } });
      expect(body.results[0]?.locator.bbox).toBeDefined();
    } finally {
      await second.stop();
    }
  } finally {
    removeDataDir(dir);
  }
}, 120_000);
