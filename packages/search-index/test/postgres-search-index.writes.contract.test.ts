// Writing on a real Postgres: replacements and deletes racing each other and searches, the
// statistics they keep, and text and locators kept as given.

import { randomUUID } from "node:crypto";
import type { ExtractedPassage } from "@locus/contracts";
import type { FileRef } from "../src/search-index.ts";
import { streamOf, textPassage } from "./search-index.contract.ts";
import {
  admin,
  newFile,
  open,
  recount,
  statistics,
  trickle,
  indexPerTest,
  useTestDatabase,
} from "./postgres-test-database.ts";

useTestDatabase();

describe("PostgresSearchIndex", () => {
  const db = indexPerTest();

  const rowsOf = async (file: FileRef) =>
    (
      await admin.query<{ content: string; ord: number }>(
        `SELECT content, ord FROM ${db.schema}.passages WHERE user_id = $1 AND file_id = $2 ORDER BY ord`,
        [file.userId, file.fileId],
      )
    ).rows;

  it("concurrent replacements of one file from two pools leave exactly one set, never both", async () => {
    const second = open(db.schema);
    db.others.push(second);
    const file = newFile();
    const setOf = (label: string) =>
      Array.from({ length: 1_200 }, (_, i) => textPassage(`${label} racing passage ${i}`, 1, i + 1));
    const first = setOf("first");
    const other = setOf("second");
    for (let round = 0; round < 5; round++) {
      const counts = await Promise.all([
        db.index.replaceFilePassages(file, trickle(first)),
        second.replaceFilePassages(file, trickle(other)),
      ]);
      expect(counts).toEqual([1_200, 1_200]);
      const rows = await rowsOf(file);
      expect(rows).toHaveLength(1_200);
      const labels = new Set(rows.map((r) => r.content.split(" ")[0]));
      expect(labels.size).toBe(1);
      expect(rows.map((r) => r.ord)).toEqual(Array.from({ length: 1_200 }, (_, i) => i));
    }
    expect(await db.index.search({ userId: file.userId, text: "racing", limit: 5_000 })).toHaveLength(1_200);
  });

  it("a search during a long replacement sees the whole old set or the whole new set, nothing else", async () => {
    const file = newFile();
    const old = Array.from({ length: 300 }, (_, i) => textPassage(`old heron passage ${i}`, 1, i + 1));
    const fresh = Array.from({ length: 3_000 }, (_, i) => textPassage(`new heron passage ${i}`, 2, i + 1));
    await db.index.replaceFilePassages(file, streamOf(old));

    const searcher = open(db.schema);
    db.others.push(searcher);
    let done = false;
    const seen: string[] = [];
    const watching = (async () => {
      while (!done) {
        const hits = await searcher.search({ userId: file.userId, text: "heron", limit: 10_000 });
        const kinds = new Set(hits.map((h) => h.content.split(" ")[0]));
        seen.push(`${[...kinds].join("+")}:${hits.length}`);
      }
    })();
    // Small batches between pauses: many INSERTs reach the table before the COMMIT.
    expect(await db.index.replaceFilePassages(file, trickle(fresh, 20))).toBe(3_000);
    done = true;
    await watching;
    const final = await searcher.search({ userId: file.userId, text: "heron", limit: 10_000 });
    seen.push(`${[...new Set(final.map((h) => h.content.split(" ")[0]))].join("+")}:${final.length}`);

    expect(seen.length).toBeGreaterThan(3);
    expect(seen.filter((s) => s !== "old:300" && s !== "new:3000")).toEqual([]);
    expect(seen[0]).toBe("old:300");
    expect(seen.at(-1)).toBe("new:3000");
  });

  it("a delete that arrives during a replacement waits for it and removes the new set too", async () => {
    const file = newFile();
    await db.index.replaceFilePassages(file, streamOf([textPassage("before the race")]));
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let midway: () => void = () => undefined;
    const replacingMidway = new Promise<void>((resolve) => {
      midway = resolve;
    });
    async function* slow(): AsyncGenerator<ExtractedPassage> {
      yield textPassage("written during the race");
      midway();
      await held;
      yield textPassage("also written during the race");
    }
    // Events put in order by what happened, not by sleeps a busy CI could outlast: the replacement
    // holds the file's lock (taken before it reads a passage), then the delete waits for it.
    const replacing = db.index.replaceFilePassages(file, slow());
    await replacingMidway;
    const deleting = db.index.deleteFilePassages(file);
    const waitingForLock = async () =>
      Number(
        (
          await admin.query<{ n: string }>(
            `SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
               AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
          )
        ).rows[0]?.n ?? 0,
      ) > 0;
    for (let i = 0; !(await waitingForLock()); i++) {
      if (i > 1_000) throw new Error("the delete never waited for the replacement's lock");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    release();
    expect(await replacing).toBe(2);
    await deleting;
    expect(await rowsOf(file)).toEqual([]);
  });

  it("keeps each user's statistics equal to a count of their passages through replacements, deletes and concurrent files", async () => {
    const user = randomUUID();
    const files = [newFile(user), newFile(user), newFile(user)];
    const texts = (seed: number, n: number) =>
      Array.from({ length: n }, (_, i) =>
        textPassage(`swap space ${seed} file ${i % 3 === 0 ? "swap" : "disk"} ${i}`),
      );
    // Three files of one user at once: their statistics rows are shared, and must neither deadlock
    // nor lose an update.
    await Promise.all(files.map((f, i) => db.index.replaceFilePassages(f, trickle(texts(i, 40 + i), 7))));
    expect(await statistics(db.schema)).toEqual(await recount(db.schema));
    await db.index.replaceFilePassages(files[0]!, streamOf(texts(9, 5)));
    await db.index.deleteFilePassages(files[1]!);
    await db.index.replaceFilePassages(newFile(), streamOf(texts(5, 3)));
    expect(await statistics(db.schema)).toEqual(await recount(db.schema));
    await db.index.deleteFilePassages(files[0]!);
    await db.index.deleteFilePassages(files[2]!);
    const left = await statistics(db.schema);
    expect(left).toEqual(await recount(db.schema));
    // Nothing is kept for a user with no passages left.
    expect(left.users.some((u) => u.user_id === user)).toBe(false);
    expect(left.terms.some((t) => t.user_id === user)).toBe(false);
  });

  it("indexes passages whose text carries NUL characters instead of failing the file", async () => {
    const file = newFile();
    expect(await db.index.replaceFilePassages(file, streamOf([textPassage("nul\u0000byte in a pdf")]))).toBe(
      1,
    );
    expect(
      (await db.index.search({ userId: file.userId, text: "pdf", limit: 5 })).map((h) => h.content),
    ).toEqual(["nulbyte in a pdf"]);
  });

  it("returns locators with their keys in the order they were given", async () => {
    const file = newFile();
    const locator = {
      page: 2,
      line: 3,
      line_end: 4,
      bbox: { x: 1, y: 2, width: 3, height: 4 },
      source: "ocr",
    };
    await db.index.replaceFilePassages(
      file,
      streamOf([{ content: "ordered keys", locator } as ExtractedPassage]),
    );
    const [hit] = await db.index.search({ userId: file.userId, text: "ordered", limit: 1 });
    expect(JSON.stringify(hit?.locator)).toBe(JSON.stringify(locator));
  });
});
