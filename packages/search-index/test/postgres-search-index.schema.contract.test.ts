// The schema on a real Postgres: its tables and indexes, upgrades of older ones, and a database
// that does not answer.

import { randomUUID } from "node:crypto";
import { createServer, type AddressInfo, type Socket } from "node:net";
import { LocusError, type FileFilter } from "@locus/contracts";
import { PostgresSearchIndex } from "../src/postgres-search-index.ts";
import { normaliseScore, type FileRef } from "../src/search-index.ts";
import { bm25Score } from "../src/bm25.ts";
import { streamOf, textPassage } from "./search-index.contract.ts";
import {
  admin,
  newFile,
  open,
  recount,
  statistics,
  indexPerTest,
  useTestDatabase,
} from "./postgres-test-database.ts";

useTestDatabase();

describe("PostgresSearchIndex", () => {
  const db = indexPerTest();

  it("check() rejects within about two seconds when nothing listens, with an operator's message", async () => {
    const down = new PostgresSearchIndex({ connectionString: "postgres://postgres@127.0.0.1:1/test" });
    try {
      const started = Date.now();
      const error = await down.check().then(
        () => undefined,
        (err: unknown) => err,
      );
      // Its two-second deadline, with room for a busy CI; far below pg's own wait without one.
      expect(Date.now() - started).toBeLessThan(2_000 + 10_000);
      expect(error).toBeInstanceOf(LocusError);
      expect(error).toMatchObject({ code: "unavailable", status: 503 });
      expect((error as Error).message).toMatch(/unreachable/);
      await expect(down.search({ userId: randomUUID(), text: "anything", limit: 5 })).rejects.toMatchObject({
        code: "unavailable",
      });
    } finally {
      await down.close();
    }
  });

  it("check() rejects in time when the server accepts the connection but never answers", async () => {
    // A listener that says nothing: only the connection timeout can end the wait.
    const sockets = new Set<Socket>();
    const silentServer = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silentServer.listen(0, "127.0.0.1", resolve));
    const { port } = silentServer.address() as AddressInfo;
    const silent = new PostgresSearchIndex({
      connectionString: `postgres://postgres@127.0.0.1:${port}/test`,
    });
    try {
      const started = Date.now();
      await expect(silent.check()).rejects.toMatchObject({ code: "unavailable" });
      // It waited for its two-second deadline (a slow machine cannot make that shorter) and gave
      // up then: the upper bound has room for a busy CI, far below a wait without a deadline.
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_900);
      expect(Date.now() - started).toBeLessThan(2_000 + 10_000);
    } finally {
      await silent.close();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silentServer.close(resolve));
    }
  });

  it("upgrades a table made before ai mode: vector columns added, keyword search unchanged", async () => {
    await admin.query(`CREATE SCHEMA ${db.schema}`);
    await admin.query(`CREATE TABLE ${db.schema}.passages (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, user_id text NOT NULL, file_id text NOT NULL,
      ord integer NOT NULL, content text NOT NULL, locator json NOT NULL, tsv tsvector NOT NULL,
      CONSTRAINT passages_file_ord_key UNIQUE (user_id, file_id, ord))`);
    const file = newFile();
    const vector = Float32Array.from([0.6, 0.8]);
    expect(
      await db.index.vectorSearch({ userId: file.userId, slot: "remote", space: "s", vector, limit: 5 }),
    ).toEqual([]);
    await db.index.replaceFilePassages(
      file,
      streamOf([{ ...textPassage("upgraded puffin"), vectors: { remote: { space: "s", vector } } }]),
    );
    expect(await db.index.search({ userId: file.userId, text: "puffin", limit: 5 })).toHaveLength(1);
    const hits = await db.index.vectorSearch({
      userId: file.userId,
      slot: "remote",
      space: "s",
      vector,
      limit: 5,
    });
    expect(hits.map((h) => [h.content, Math.round(h.score * 1000) / 1000])).toEqual([["upgraded puffin", 1]]);
  });

  it("upgrades an index whose text-search configuration stemmed: tsvectors made again, configuration dropped", async () => {
    // The layout before terms were made in JavaScript: Snowball stemming in a configuration of the
    // schema's own, which stems unlike every other backend (Snowball keeps "general", Porter makes
    // it "gener", as it does "generous").
    await admin.query(`CREATE SCHEMA ${db.schema}`);
    await admin.query(`
      CREATE TEXT SEARCH DICTIONARY ${db.schema}.locus_english_stem (TEMPLATE = snowball, LANGUAGE = english);
      CREATE TEXT SEARCH CONFIGURATION ${db.schema}.locus_english (COPY = pg_catalog.english);
      ALTER TEXT SEARCH CONFIGURATION ${db.schema}.locus_english
        ALTER MAPPING REPLACE pg_catalog.english_stem WITH ${db.schema}.locus_english_stem;`);
    await admin.query(`CREATE TABLE ${db.schema}.passages (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, user_id text NOT NULL, file_id text NOT NULL,
      ord integer NOT NULL, content text NOT NULL, locator json NOT NULL, tsv tsvector NOT NULL,
      CONSTRAINT passages_file_ord_key UNIQUE (user_id, file_id, ord))`);
    const file = newFile();
    for (const [ord, content] of ["She gave generously.", "A generous gift.", "Le café"].entries()) {
      await admin.query(
        `INSERT INTO ${db.schema}.passages (user_id, file_id, ord, content, locator, tsv)
         VALUES ($1, $2, $3, $4, $5, to_tsvector('${db.schema}.locus_english'::regconfig, lower($4)))`,
        [file.userId, file.fileId, ord, content, JSON.stringify({ page: 1, line: ord + 1 })],
      );
    }
    const lines = async (text: string) =>
      (await db.index.search({ userId: file.userId, text, limit: 5 })).map((h) => h.locator.line).sort();
    expect(await lines("generous")).toEqual([1, 2]);
    expect(await lines("general")).toEqual([1, 2]);
    expect(await lines("cafe")).toEqual([3]);
    const made = await admin.query<{ tsv: string }>(
      `SELECT tsv::text AS tsv FROM ${db.schema}.passages WHERE user_id = $1 ORDER BY ord`,
      [file.userId],
    );
    expect(made.rows.map((r) => r.tsv)).toEqual([
      "'gave':2 'gener':3 'she':1",
      "'a':1 'gener':2 'gift':3",
      "'cafe':2 'le':1",
    ]);
    const config = await admin.query(
      `SELECT 1 FROM pg_ts_config c JOIN pg_namespace n ON n.oid = c.cfgnamespace WHERE n.nspname = $1`,
      [db.schema],
    );
    expect(config.rowCount).toBe(0);
  });

  it("upgrades an index made before BM25: term counts and the users' statistics made from the passages", async () => {
    // The layout of terms made in JavaScript without BM25's counts: tsvectors with positions only.
    await admin.query(`CREATE SCHEMA ${db.schema}`);
    await admin.query(`CREATE TABLE ${db.schema}.passages (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, user_id text NOT NULL, file_id text NOT NULL,
      ord integer NOT NULL, content text NOT NULL, locator json NOT NULL, tsv tsvector NOT NULL,
      local_space text, local_vector bytea, remote_space text, remote_vector bytea,
      CONSTRAINT passages_file_ord_key UNIQUE (user_id, file_id, ord))`);
    const [a, b] = [newFile(), newFile()];
    const rows: [FileRef, string, string][] = [
      [a, "swap swap swap space", "'space':4 'swap':1,2,3"],
      [a, "a file system", "'a':1 'file':2 'system':3"],
      [b, "swap file", "'file':2 'swap':1"],
    ];
    for (const [ord, [file, content, tsv]] of rows.entries()) {
      await admin.query(
        `INSERT INTO ${db.schema}.passages (user_id, file_id, ord, content, locator, tsv) VALUES ($1, $2, $3, $4, $5, $6)`,
        [file.userId, file.fileId, ord, content, JSON.stringify({ page: 1, line: ord + 1 }), tsv],
      );
    }
    const [hit] = await db.index.search({ userId: a.userId, text: "swap", limit: 5 });
    // User a: 2 passages, 7 terms; "swap" in 1 of them, 3 times, in a passage of 4 terms.
    expect(hit?.score).toBeCloseTo(
      normaliseScore(
        bm25Score(["swap"], (t) => (t === "swap" ? 3 : 0), 4, {
          passages: 2,
          terms: 7,
          passagesWith: new Map([["swap", 1]]),
        }),
      ),
      12,
    );
    expect(await statistics(db.schema)).toEqual(await recount(db.schema));
    const counted = await admin.query(`SELECT term_count, repeats FROM ${db.schema}.passages ORDER BY id`);
    expect(counted.rows).toEqual([
      { term_count: 4, repeats: { swap: 3 } },
      { term_count: 3, repeats: null },
      { term_count: 2, repeats: null },
    ]);
  });

  it("upgrades an index made before filters: their tables added, its files found by file ids alone until indexed again", async () => {
    const file = newFile();
    await db.index.replaceFilePassages(file, streamOf([textPassage("grebe indexed before filters")]));
    await admin.query(`DROP TABLE ${db.schema}.file_attributes, ${db.schema}.file_metadata`);
    const upgraded = open(db.schema);
    db.others.push(upgraded);
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
  });

  it("keeps its tables in its own schema, and two processes starting together create them once", async () => {
    const a = open(db.schema);
    const b = open(db.schema);
    db.others.push(a, b);
    await Promise.all([a.check(), b.check(), db.index.check()]);
    const tables = await admin.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = $1",
      [db.schema],
    );
    expect(tables.rows.map((r) => r.table_name).sort()).toEqual([
      "file_attributes",
      "file_metadata",
      "indexed_files",
      "passages",
      "term_stats",
      "user_stats",
      "vector_generations",
    ]);
    const file = newFile();
    await a.replaceFilePassages(file, streamOf([textPassage("created once")]));
    expect(await b.search({ userId: file.userId, text: "created", limit: 5 })).toHaveLength(1);
  });

  it("keeps the user filter inside the GIN index when btree_gin is available", async () => {
    const hasBtreeGin = (await admin.query("SELECT 1 FROM pg_extension WHERE extname = 'btree_gin'"))
      .rowCount;
    await db.index.check();
    const gin = await admin.query<{ indexname: string; indexdef: string }>(
      "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND indexdef LIKE '%USING gin%'",
      [db.schema],
    );
    const client = await admin.connect();
    try {
      // On a table this small the planner rightly prefers the (user_id, file_id, ord) btree; with
      // it and sequential scans out of the way (rolled back below) the plan shows whether the GIN
      // index alone can answer both conditions, which is what it does for users with many passages.
      await client.query("BEGIN");
      await client.query(`ALTER TABLE ${db.schema}.passages DROP CONSTRAINT passages_file_ord_key`);
      await client.query("SET LOCAL enable_seqscan = off");
      const plan = await client.query<{ "QUERY PLAN": string }>(
        `EXPLAIN SELECT id FROM ${db.schema}.passages
         WHERE user_id = $1 AND tsv @@ $2::tsquery`,
        [randomUUID(), "'ibi'"],
      );
      const text = plan.rows.map((r) => r["QUERY PLAN"]).join("\n");
      if (hasBtreeGin) {
        expect(gin.rows).toEqual([
          { indexname: "passages_user_tsv_idx", indexdef: expect.stringContaining("gin (user_id, tsv)") },
        ]);
        expect(text).toMatch(/Index Cond: \(\(user_id = .*\) AND \(tsv @@ .*\)\)/);
      } else {
        console.warn("btree_gin is not installed: the user filter runs after the GIN index scan");
        expect(gin.rows.map((r) => r.indexname)).toEqual(["passages_tsv_idx"]);
      }
    } finally {
      await client.query("ROLLBACK");
      client.release();
    }
  });

  it("rejects a schema name that would need quoting", () => {
    expect(() => open("Robert'); DROP")).toThrow(/lower-case letters, digits and underscores/);
  });
});
