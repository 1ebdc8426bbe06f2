// Quick search on a real Postgres: scored from postings in memory or in SQL, alike, and like SQLite.

import { randomUUID } from "node:crypto";
import type { PostingsLoaded } from "../src/postgres-search-index.ts";
import { SqliteSearchIndex } from "../src/sqlite-search-index.ts";
import type { FileRef, SearchIndex } from "../src/search-index.ts";
import { streamOf, textPassage } from "./search-index.contract.ts";
import { indexPerTest, newFile, open, useTestDatabase } from "./postgres-test-database.ts";

useTestDatabase();

describe("PostgresSearchIndex", () => {
  const db = indexPerTest();

  it("scores quick search from postings in memory as the SQL does, catching up with another process's writes", async () => {
    const memory = open(db.schema, 4, { loadPostingsInBackground: false });
    const sql = open(db.schema, 4, { postingsCacheBytes: 0 });
    db.others.push(memory, sql);
    const userId = randomUUID();
    const files = Array.from({ length: 6 }, () => newFile(userId));
    const write = (file: FileRef, label: string, n: number) =>
      db.index.replaceFilePassages(
        file,
        streamOf(
          Array.from({ length: n }, (_, i) =>
            textPassage(`${label} the ${"the ".repeat(i % 4)}file of ${i % 3 === 0 ? "swap" : "font"} ${i}`),
          ),
        ),
      );
    for (const [i, file] of files.entries()) await write(file, `first${i}`, 40);
    await write(newFile(), "someone else's", 30);
    const same = async () => {
      for (const text of ["the", "the of", "swap file", "font", "first2", "second3", "nothing"]) {
        const want = await sql.search({ userId, text, limit: 25 });
        const got = await memory.search({ userId, text, limit: 25 });
        expect(got.map((h) => [h.fileId, h.ord])).toEqual(want.map((h) => [h.fileId, h.ord]));
        got.forEach((h, i) => expect(h.score).toBeCloseTo(want[i]!.score, 12));
      }
    };
    await same();
    // Another process (here `index`) replaces, deletes and adds: the next search sees all of it.
    await write(files[3]!, "second3", 15);
    await db.index.deleteFilePassages(files[0]!);
    await db.index.deleteFilePassages(files[1]!);
    await write(newFile(userId), "third", 10);
    await same();
    expect((await memory.search({ userId, text: "first0", limit: 5 })).length).toBe(0);
    expect((await memory.search({ userId, text: "second3", limit: 50 })).length).toBe(15);
  });

  it("answers a user's first quick search in SQL while their postings load, says when they are, and the same after", async () => {
    const loaded: PostingsLoaded[] = [];
    // The default: postings load behind the first search.
    const background = open(db.schema, 4, { onPostingsLoaded: (l) => loaded.push(l) });
    db.others.push(background);
    const file = newFile();
    await db.index.replaceFilePassages(
      file,
      streamOf(Array.from({ length: 50 }, (_, i) => textPassage(`the ${"the ".repeat(i % 5)}passage ${i}`))),
    );
    const query = { userId: file.userId, text: "the passage", limit: 10 };
    const first = await background.search(query);
    expect(first).toHaveLength(10);
    // Whichever path answers the later searches, the answer does not change.
    for (let i = 0; i < 5; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await background.search(query)).toEqual(first);
    }
    // Read once, in full, and kept: the later searches caught up from memory.
    expect(loaded).toEqual([
      { userId: file.userId, passages: 50, bytes: expect.any(Number), ms: expect.any(Number), kept: true },
    ]);
  });

  it("scores in SQL a user whose postings do not fit the memory given", async () => {
    const loaded: PostingsLoaded[] = [];
    const tiny = open(db.schema, 4, {
      postingsCacheBytes: 1_000,
      loadPostingsInBackground: false,
      onPostingsLoaded: (l) => loaded.push(l),
    });
    const sql = open(db.schema, 4, { postingsCacheBytes: 0 });
    db.others.push(tiny, sql);
    const file = newFile();
    await db.index.replaceFilePassages(
      file,
      streamOf(
        Array.from({ length: 60 }, (_, i) => textPassage(`crowded words ${i} ${"more ".repeat(i % 7)}`)),
      ),
    );
    const query = { userId: file.userId, text: "more words", limit: 10 };
    expect(await tiny.search(query)).toEqual(await sql.search(query));
    expect(loaded).toMatchObject([{ userId: file.userId, passages: 60, kept: false }]);
  });

  it("behaves like the embedded index for stop words and Latin diacritics", async () => {
    const sqlite = new SqliteSearchIndex(":memory:");
    db.others.push(sqlite);
    const file = newFile();
    const passages = [
      textPassage("Only the résumé was between us.", 1, 1),
      textPassage("Ёлка и ροδος", 1, 2),
      textPassage("यह भाषा सुंदर है", 1, 3),
      textPassage("भारत एक देश है", 1, 4),
    ];
    await db.index.replaceFilePassages(file, streamOf(passages));
    await sqlite.replaceFilePassages(file, streamOf(passages));
    for (const text of [
      "the",
      "only between",
      "resume",
      "RÉSUMÉ",
      "ёлка",
      "елка",
      "ροδος",
      "भाषा",
      "naive",
    ]) {
      const lines = async (engine: SearchIndex) =>
        (await engine.search({ userId: file.userId, text, limit: 10 })).map((h) => h.locator.line).sort();
      expect([text, await lines(db.index)]).toEqual([text, await lines(sqlite)]);
    }
  });
});
