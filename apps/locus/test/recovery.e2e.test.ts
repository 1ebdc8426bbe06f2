import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import {
  client,
  createUserWithKey,
  makePdf,
  pageWith,
  PARAPHRASES_DEV,
  removeDataDir,
  startLocus,
  tempDataDir,
  waitForFile,
  waitForMeaning,
} from "@locus/testing";

/**
 * A crash never strands a file: work left pending or processing runs again at start, a re-run
 * replaces the file's passages instead of adding to them, and a ready file whose passages were
 * still being encoded for ai search (the meaning stage, the default) gets the rest of its vectors.
 */
interface SearchBody {
  results: { file_id: string; locator: { page?: number; line?: number } }[];
  count: number;
}

const dataDir = tempDataDir();
afterAll(() => removeDataDir(dataDir));

async function countHits(c: ReturnType<typeof client>, q: string, fileId: string): Promise<number> {
  const body = (await (await c.get(`/api/search?q=${encodeURIComponent(q)}&limit=100`)).json()) as SearchBody;
  return body.results.filter((r) => r.file_id === fileId).length;
}

describe("crash recovery", () => {
  it("finishes a file whose process was killed before it was processed", async () => {
    const pages = Array.from({ length: 120 }, (_, i) =>
      pageWith(i === 99 ? "The heron nests beside the old mill pond." : `Page ${i + 1} speaks of rivers.`, 9),
    );
    const pdf = await makePdf({ pages });

    const first = await startLocus({ dataDir });
    const { key } = await createUserWithKey(dataDir, { plan: "pro" });
    let file = { id: "", status: "" };
    try {
      const res = await client(first.baseUrl, key).upload(pdf, "long.pdf");
      expect(res.status).toBe(200);
      file = ((await res.json()) as { file: typeof file }).file;
      expect(file.status).toBe("pending");
    } finally {
      await first.kill(); // SIGKILL: no shutdown, messages in memory are gone
    }

    const second = await startLocus({ dataDir });
    try {
      const c = client(second.baseUrl, key);
      const done = await waitForFile(c, file.id, 60_000);
      expect(done).toMatchObject({ status: "ready", page_count: 120 });
      const body = (await (await c.get("/api/search?q=heron%20nests")).json()) as SearchBody;
      expect(body.results[0]).toMatchObject({ file_id: file.id, locator: { page: 100, line: 9 } });
      expect(await countHits(c, "heron nests mill pond", file.id)).toBe(1);
    } finally {
      expect(await second.stop()).toBe(0);
    }
  }, 120_000);

  it("re-runs a file left processing after indexing without duplicating its passages", async () => {
    const locus = await startLocus({ dataDir });
    const { key } = await createUserWithKey(dataDir, { plan: "pro" });
    const c = client(locus.baseUrl, key);
    const pdf = await makePdf({
      pages: [pageWith("A lone kingfisher watched the weir.", 5), pageWith("Otters again.", 3)],
    });
    let fileId = "";
    let passageCount: unknown;
    let otterHits = 0;
    try {
      const { file } = (await (await c.upload(pdf, "again.pdf")).json()) as { file: { id: string } };
      fileId = file.id;
      passageCount = (await waitForFile(c, file.id)).passage_count;
      expect(await countHits(c, "kingfisher weir", file.id)).toBe(1);
      otterHits = await countHits(c, "otters filler", file.id);
    } finally {
      await locus.kill();
    }
    const file = { id: fileId };

    // As if the process died after indexing but before marking the file ready.
    const db = new BetterSqlite3(join(dataDir, "metadata.sqlite"));
    db.prepare("UPDATE files SET status = 'processing' WHERE id = ?").run(file.id);
    db.close();

    const again = await startLocus({ dataDir });
    try {
      const c2 = client(again.baseUrl, key);
      const done = await waitForFile(c2, file.id);
      expect(done).toMatchObject({ status: "ready", passage_count: passageCount });
      expect(await countHits(c2, "kingfisher weir", file.id)).toBe(1);
      expect(await countHits(c2, "otters filler", file.id)).toBe(otterHits);
      expect(again.logs.join("\n")).toMatch(/re-queued unfinished files/);
    } finally {
      expect(await again.stop()).toBe(0);
    }
  }, 120_000);

  it("encodes the rest of a ready file whose process was killed while the meaning stage encoded it", async () => {
    // About 600 passages, several seconds of the encoder's work; a late page that holds only a
    // statement which only its vector can find (no word in common with its question).
    const { statement, question } = PARAPHRASES_DEV[0]!;
    const pages = Array.from({ length: 150 }, (_, i) =>
      i === 139 ? [statement] : pageWith(`Page ${i + 1} speaks of rivers.`, 4),
    );
    const pdf = await makePdf({ pages });
    const first = await startLocus({ dataDir });
    const { key } = await createUserWithKey(dataDir, { plan: "pro" });
    let fileId = "";
    try {
      const c = client(first.baseUrl, key);
      fileId = ((await (await c.upload(pdf, "encoded later.pdf")).json()) as { file: { id: string } }).file
        .id;
      // Ready for keyword search, its vectors still being made.
      expect(await waitForFile(c, fileId, 90_000)).toMatchObject({ status: "ready", ai_vectors: "pending" });
    } finally {
      await first.kill(); // SIGKILL: the message that asked for the encoding is gone with it
    }

    const second = await startLocus({ dataDir });
    try {
      const c = client(second.baseUrl, key);
      expect((await waitForMeaning(c, fileId, 120_000)).ai_vectors).toBe("ready");
      expect(second.logs.join("\n")).toMatch(/files waiting for their vectors announced again/);
      const body = (await (
        await c.get(`/api/search?q=${encodeURIComponent(question)}&mode=ai&limit=5`)
      ).json()) as SearchBody;
      expect(body.results[0]).toMatchObject({ file_id: fileId, locator: { page: 140 } });
    } finally {
      expect(await second.stop()).toBe(0);
    }
  }, 300_000);

  it("fails a file instead of processing it at every start when each run it began stopped unfinished", async () => {
    const locus = await startLocus({ dataDir });
    const { key } = await createUserWithKey(dataDir, { plan: "pro" });
    const pdf = await makePdf({ pages: [pageWith("A file every run stops on.", 3)] });
    let fileId = "";
    try {
      const c = client(locus.baseUrl, key);
      fileId = ((await (await c.upload(pdf, "fatal.pdf")).json()) as { file: { id: string } }).file.id;
      await waitForFile(c, fileId);
    } finally {
      await locus.kill();
    }
    // As if the process had died with the file processing twice: re-queued once at the start
    // after the first death, and processing again when the second came.
    const db = new BetterSqlite3(join(dataDir, "metadata.sqlite"));
    db.prepare("UPDATE files SET status = 'processing', requeues = 1 WHERE id = ?").run(fileId);
    db.close();

    const again = await startLocus({ dataDir, env: { LOCUS_BUS_DELIVERY_LIMIT: "1" } });
    try {
      const failed = await waitForFile(client(again.baseUrl, key), fileId);
      expect(failed).toMatchObject({ status: "failed", error: { code: "processing_abandoned" } });
      expect((failed.error as { message: string }).message).toMatch(/^Locus gave up on this file/);
      expect(again.logs.join("\n")).toMatch(/processing abandoned/);
    } finally {
      expect(await again.stop()).toBe(0);
    }
  }, 120_000);
});
