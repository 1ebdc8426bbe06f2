import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import type { FileFilter } from "@locus/contracts";
import { SqliteSearchIndex } from "../src/sqlite-search-index.ts";
import { searchIndexContract, streamOf, textPassage } from "./search-index.contract.ts";
import { passageVectorWriterContract } from "./vector-writer.contract.ts";

/** A fresh index in a temporary directory, removed after the test. */
const tempIndex = async () => {
  const dir = await mkdtemp(join(tmpdir(), "locus-index-"));
  const index = new SqliteSearchIndex(join(dir, "index.db"));
  return {
    index,
    async cleanup() {
      await index.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
};

searchIndexContract("SQLite FTS5", tempIndex);

describe("SqliteSearchIndex on disk", () => {
  let dir: string;
  let path: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "locus-index-file-"));
    path = join(dir, "nested", "index.db");
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("keeps passages across reopening the file, and reopening does not duplicate its schema", async () => {
    const file = { userId: randomUUID(), fileId: randomUUID() };
    const first = new SqliteSearchIndex(path);
    await first.replaceFilePassages(file, streamOf([textPassage("persistent cormorant passage", 3, 7, 9)]));
    await first.close();

    const second = new SqliteSearchIndex(path);
    try {
      const hits = await second.search({ userId: file.userId, text: "cormorant", limit: 5 });
      expect(hits.map((h) => h.locator)).toEqual([{ page: 3, line: 7, line_end: 9, source: "text" }]);
    } finally {
      await second.close();
    }
  });

  it("opens an index made before filters: their tables added, its files found by file ids alone until indexed again", async () => {
    const file = { userId: randomUUID(), fileId: randomUUID() };
    const first = new SqliteSearchIndex(path);
    await first.replaceFilePassages(file, streamOf([textPassage("grebe indexed before filters")]));
    await first.close();
    const old = new BetterSqlite3(path);
    old.exec(`DROP TABLE file_attributes; DROP TABLE file_metadata_terms;`);
    old.close();

    const upgraded = new SqliteSearchIndex(path);
    try {
      const found = (filter: FileFilter) =>
        upgraded.search({ userId: file.userId, text: "grebe", limit: 5, filter });
      expect(await found({ fileIds: [file.fileId] })).toHaveLength(1);
      expect(await found({ fileTypes: ["pdf"] })).toEqual([]);
      const attributes = {
        fileType: "pdf" as const,
        createdAt: "2024-05-01T00:00:00.000Z",
        metadata: { k: "v" },
      };
      await upgraded.replaceFilePassages(
        { ...file, attributes },
        streamOf([textPassage("grebe indexed again")]),
      );
      expect(await found({ fileTypes: ["pdf"], metadata: { k: "v" } })).toHaveLength(1);
    } finally {
      await upgraded.close();
    }
  });

  it("opens an index made before ai mode: keyword search works, vectors come with the next replacement", async () => {
    const file = { userId: randomUUID(), fileId: randomUUID() };
    const { mkdirSync } = await import("node:fs");
    mkdirSync(join(dir, "nested"), { recursive: true });
    const old = new BetterSqlite3(path);
    // The schema as the first release made it: no vector columns, no generations.
    old.exec(`
      CREATE TABLE passages (id INTEGER PRIMARY KEY, user_id TEXT NOT NULL, file_id TEXT NOT NULL,
        ord INTEGER NOT NULL, content TEXT NOT NULL, locator TEXT NOT NULL, terms TEXT NOT NULL);
      CREATE TABLE passages_staging (batch TEXT NOT NULL, ord INTEGER NOT NULL, content TEXT NOT NULL,
        locator TEXT NOT NULL, terms TEXT NOT NULL);`);
    old.close();
    const upgraded = new SqliteSearchIndex(path);
    try {
      const vector = Float32Array.from([0, 1]);
      expect(
        await upgraded.vectorSearch({ userId: file.userId, slot: "local", space: "s", vector, limit: 5 }),
      ).toEqual([]);
      await upgraded.replaceFilePassages(
        file,
        streamOf([{ ...textPassage("upgraded puffin"), vectors: { local: { space: "s", vector } } }]),
      );
      expect(await upgraded.search({ userId: file.userId, text: "puffin", limit: 5 })).toHaveLength(1);
      const hits = await upgraded.vectorSearch({
        userId: file.userId,
        slot: "local",
        space: "s",
        vector,
        limit: 5,
      });
      expect(hits.map((h) => h.content)).toEqual(["upgraded puffin"]);
    } finally {
      await upgraded.close();
    }
  });

  it("opens an index whose FTS5 table stemmed (porter): terms are made again, staged ones too", async () => {
    const { createHash } = await import("node:crypto");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(join(dir, "nested"), { recursive: true });
    // The bug shows for tenants whose hash has a vowel (a or e): most, not all.
    const tenantOf = (id: string) => `t${createHash("sha256").update(id).digest("hex").slice(0, 12)}`;
    let userId = randomUUID();
    while (!/[ae]/.test(tenantOf(userId))) userId = randomUUID();
    const tenant = tenantOf(userId);
    const old = new BetterSqlite3(path);
    // The layout before terms were made in JavaScript: unstemmed tenant-prefixed words, stemmed by
    // the porter tokenizer, which measured the prefix too ("bed" lost its "ed" and met "being").
    old.exec(`
      CREATE TABLE passages (id INTEGER PRIMARY KEY, user_id TEXT NOT NULL, file_id TEXT NOT NULL,
        ord INTEGER NOT NULL, content TEXT NOT NULL, locator TEXT NOT NULL, terms TEXT NOT NULL);
      CREATE VIRTUAL TABLE passages_fts USING fts5(terms, content='passages', content_rowid='id',
        tokenize="porter unicode61 remove_diacritics 2 tokenchars '_' categories 'L* M* N* Co'");
      CREATE TRIGGER passages_ai AFTER INSERT ON passages BEGIN
        INSERT INTO passages_fts(rowid, terms) VALUES (new.id, new.terms);
      END;
      CREATE TABLE passages_staging (batch TEXT NOT NULL, ord INTEGER NOT NULL, content TEXT NOT NULL,
        locator TEXT NOT NULL, terms TEXT NOT NULL);`);
    const insert = old.prepare(
      `INSERT INTO passages (user_id, file_id, ord, content, locator, terms) VALUES (?, ?, ?, ?, ?, ?)`,
    );
    const fileId = randomUUID();
    ["The bed was made of oak", "Being there mattered", "Le café"].forEach((content, i) =>
      insert.run(
        userId,
        fileId,
        i,
        content,
        JSON.stringify({ page: 1, line: i + 1 }),
        content
          .toLowerCase()
          .split(/\s+/)
          .map((w) => `${tenant}_${w}`)
          .join(" "),
      ),
    );
    old
      .prepare(`INSERT INTO passages_staging (batch, ord, content, locator, terms) VALUES (?, ?, ?, ?, ?)`)
      .run("b", 0, "Staged harbours", "{}", `${tenant}_staged ${tenant}_harbours`);
    const wrong = (text: string) =>
      old
        .prepare(`SELECT count(*) AS n FROM passages_fts WHERE passages_fts MATCH ?`)
        .get(`"${tenant}_${text}"`) as { n: number };
    expect(wrong("bed").n).toBe(2); // the bug being fixed: "bed" found "being"
    old.close();

    const upgraded = new SqliteSearchIndex(path);
    try {
      const lines = async (text: string) =>
        (await upgraded.search({ userId, text, limit: 5 })).map((h) => h.locator.line);
      expect(await lines("bed")).toEqual([1]);
      expect(await lines("beds")).toEqual([1]);
      expect(await lines("being")).toEqual([2]);
      expect(await lines("cafe")).toEqual([3]);
      const check = new BetterSqlite3(path, { readonly: true });
      expect(check.prepare(`SELECT terms FROM passages_staging`).pluck().get()).toBe(
        `${tenant}_stage ${tenant}_harbour`,
      );
      check.close();
    } finally {
      await upgraded.close();
    }
    // Reopening finds the new layout and changes nothing.
    const again = new SqliteSearchIndex(path);
    expect((await again.search({ userId, text: "bed", limit: 5 })).map((h) => h.locator.line)).toEqual([1]);
    await again.close();
  });

  it("opens an index made before BM25 on each user's statistics: term counts and user_stats counted", async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    const made = new SqliteSearchIndex(path);
    await made.replaceFilePassages(
      { userId: a, fileId: randomUUID() },
      streamOf([textPassage("swap swap space"), textPassage("a file system here")]),
    );
    await made.replaceFilePassages({ userId: b, fileId: randomUUID() }, streamOf([textPassage("swap file")]));
    const before = await made.search({ userId: a, text: "swap", limit: 5 });
    await made.close();
    // What the layout before looked like: no counts, no statistics.
    const old = new BetterSqlite3(path);
    old.exec(`DROP TABLE user_stats; DROP TABLE passages_vocab;
              ALTER TABLE passages DROP COLUMN term_count; ALTER TABLE passages_staging DROP COLUMN term_count;`);
    old.close();

    const upgraded = new SqliteSearchIndex(path);
    try {
      expect(await upgraded.search({ userId: a, text: "swap", limit: 5 })).toEqual(before);
      const check = new BetterSqlite3(path, { readonly: true });
      expect(check.prepare(`SELECT term_count FROM passages ORDER BY id`).pluck().all()).toEqual([3, 4, 2]);
      expect(
        check.prepare(`SELECT user_id, passages, terms FROM user_stats ORDER BY passages DESC`).all(),
      ).toEqual([
        { user_id: a, passages: 2, terms: 7 },
        { user_id: b, passages: 1, terms: 2 },
      ]);
      check.close();
    } finally {
      await upgraded.close();
    }
  });

  it("keeps each user's statistics equal to a count of their passages through replacements and deletes", async () => {
    const index = new SqliteSearchIndex(path);
    const user = randomUUID();
    const files = [randomUUID(), randomUUID()].map((fileId) => ({ userId: user, fileId }));
    const texts = (n: number) =>
      Array.from({ length: n }, (_, i) => textPassage(`swap disk ${"word ".repeat(i)}`));
    const db = new BetterSqlite3(path, { readonly: true });
    const kept = () => db.prepare(`SELECT passages, terms FROM user_stats WHERE user_id = ?`).get(user);
    const counted = () =>
      db
        .prepare(
          `SELECT count(*) AS passages, sum(term_count) AS terms FROM passages WHERE user_id = ? HAVING count(*) > 0`,
        )
        .get(user);
    try {
      await index.replaceFilePassages(files[0]!, streamOf(texts(5)));
      await index.replaceFilePassages(files[1]!, streamOf(texts(3)));
      expect(kept()).toEqual({ passages: 8, terms: 2 * 8 + (0 + 1 + 2 + 3 + 4) + (0 + 1 + 2) });
      await index.replaceFilePassages(files[0]!, streamOf(texts(2)));
      expect(kept()).toEqual(counted());
      await index.deleteFilePassages(files[1]!);
      expect(kept()).toEqual(counted());
      await index.deleteFilePassages(files[0]!);
      expect(kept()).toBeUndefined();
      expect(counted()).toBeUndefined();
    } finally {
      db.close();
      await index.close();
    }
  });

  it("an indexer and a search process on the same file see each other's writes", async () => {
    const indexer = new SqliteSearchIndex(path);
    const searcher = new SqliteSearchIndex(path);
    try {
      const file = { userId: randomUUID(), fileId: randomUUID() };
      await indexer.replaceFilePassages(file, streamOf([textPassage("shared albatross")]));
      expect(await searcher.search({ userId: file.userId, text: "albatross", limit: 5 })).toHaveLength(1);
      await indexer.deleteFilePassages(file);
      expect(await searcher.search({ userId: file.userId, text: "albatross", limit: 5 })).toEqual([]);
    } finally {
      await indexer.close();
      await searcher.close();
    }
  });

  it("leaves no staged rows behind after a replacement, whether it succeeds or fails", async () => {
    const index = new SqliteSearchIndex(path);
    const file = { userId: randomUUID(), fileId: randomUUID() };
    async function* broken() {
      yield textPassage("staged then abandoned");
      await Promise.resolve();
      throw new Error("broken stream");
    }
    try {
      await index.replaceFilePassages(
        file,
        streamOf(Array.from({ length: 700 }, (_, i) => textPassage(`row ${i}`))),
      );
      await expect(index.replaceFilePassages(file, broken())).rejects.toThrow("broken stream");
    } finally {
      await index.close();
    }
    const db = new BetterSqlite3(path, { readonly: true });
    try {
      expect(db.prepare("SELECT count(*) AS n FROM passages_staging").get()).toEqual({ n: 0 });
      expect(db.prepare("SELECT count(*) AS n FROM passages").get()).toEqual({ n: 700 });
    } finally {
      db.close();
    }
  });

  it("field syntax naming another tenant's column cannot reach that tenant's passages", async () => {
    const index = new SqliteSearchIndex(path);
    try {
      const mine = { userId: randomUUID(), fileId: randomUUID() };
      const theirs = { userId: randomUUID(), fileId: randomUUID() };
      await index.replaceFilePassages(mine, streamOf([textPassage("my ordinary notes")]));
      await index.replaceFilePassages(theirs, streamOf([textPassage("their secret figures")]));
      const token = `t${theirs.userId.replace(/-/g, "")}`;
      for (const text of [
        `tenant:${token} secret`,
        `tenant:"${token}" OR secret`,
        `{tenant}: ${token}`,
        token,
      ]) {
        const hits = await index.search({ userId: mine.userId, text, limit: 10 });
        expect(hits.every((h) => h.fileId === mine.fileId)).toBe(true);
      }
    } finally {
      await index.close();
    }
  });

  it("tells its observer whether each vector search found the user's vectors in memory", async () => {
    const lookups: string[] = [];
    const index = new SqliteSearchIndex(":memory:", {
      vectorCacheObserver: { vectorCacheLookedUp: (result) => lookups.push(result) },
    });
    try {
      const file = { userId: randomUUID(), fileId: randomUUID() };
      const vector = Float32Array.from([1, 0, 0, 0]);
      const withVector = (content: string) => ({
        ...textPassage(content),
        vectors: { local: { space: "s", vector } },
      });
      const nearest = () =>
        index.vectorSearch({ userId: file.userId, slot: "local", space: "s", vector, limit: 5 });
      await index.replaceFilePassages(file, streamOf([withVector("a gannet")]));
      expect(await nearest()).toHaveLength(1);
      expect(await nearest()).toHaveLength(1);
      // The user's passages changed: their vectors are read again, once.
      await index.replaceFilePassages(file, streamOf([withVector("a gannet"), withVector("a skua")]));
      expect(await nearest()).toHaveLength(2);
      expect(await nearest()).toHaveLength(2);
      expect(lookups).toEqual(["miss", "hit", "miss", "hit"]);
    } finally {
      await index.close();
    }
  });

  it("works in memory", async () => {
    const index = new SqliteSearchIndex(":memory:");
    try {
      const file = { userId: randomUUID(), fileId: randomUUID() };
      await index.replaceFilePassages(file, streamOf([textPassage("ephemeral puffin")]));
      expect(await index.search({ userId: file.userId, text: "puffin", limit: 1 })).toHaveLength(1);
    } finally {
      await index.close();
    }
  });
});

describe("SqliteSearchIndex: scripts with combining marks", () => {
  it("keeps a Devanagari word whole, so it finds only passages with that word", async () => {
    const index = new SqliteSearchIndex(":memory:");
    const userId = "8d8ac610-566d-4ef0-9c22-186b2a5ed793";
    await index.replaceFilePassages(
      { userId, fileId: "f1" },
      streamOf([textPassage("यह भाषा सुंदर है", 1, 1), textPassage("भारत एक देश है", 1, 2)]),
    );
    const hits = await index.search({ userId, text: "भाषा", limit: 10 });
    expect(hits.map((h) => h.locator.line)).toEqual([1]);
    await index.close();
  });
});

passageVectorWriterContract("SQLite", tempIndex);
