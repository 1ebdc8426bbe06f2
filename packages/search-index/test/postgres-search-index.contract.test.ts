import { randomUUID } from "node:crypto";
import { createServer, type AddressInfo, type Socket } from "node:net";
import pg from "pg";
import type { ExtractedPassage } from "@locus/contracts";
import { LocusError } from "@locus/contracts";
import {
  PostgresSearchIndex,
  type PostgresSearchIndexOptions,
  type PostingsLoaded,
} from "../src/postgres-search-index.ts";
import { SqliteSearchIndex } from "../src/sqlite-search-index.ts";
import { normaliseScore, type FileRef, type SearchIndex } from "../src/search-index.ts";
import { bm25Score } from "../src/bm25.ts";
import { searchIndexContract, streamOf, textPassage } from "./search-index.contract.ts";

// A real Postgres is part of the build machine and of CI; without one this file fails rather than
// skips, so a missing database can never pass for a green run.
const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const redacted = DATABASE_URL.replace(/\/\/([^:@/]+):[^@/]*@/, "//$1:***@");

const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2, connectionTimeoutMillis: 5_000 });
const schemas = new Set<string>();

beforeAll(async () => {
  try {
    await admin.query("SELECT 1");
  } catch (err) {
    throw new Error(
      `Postgres is not reachable at ${redacted} (${(err as Error).message}). These tests need a real ` +
        `Postgres: start it, or point DATABASE_URL at one.`,
    );
  }
});

afterAll(async () => {
  // Schemas a failed test did not get to drop.
  for (const schema of schemas) await dropSchema(schema);
  await admin.end();
});

const newSchema = () => {
  const schema = `locus_test_${randomUUID().replace(/-/g, "").slice(0, 16)}`;
  schemas.add(schema);
  return schema;
};

async function dropSchema(schema: string): Promise<void> {
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  schemas.delete(schema);
}

/** The statistics the index keeps, and the same counted from its passages, in one shape. */
async function statistics(schema: string) {
  const users = await admin.query<{ user_id: string; passages: string; terms: string }>(
    `SELECT user_id, passages::text, terms::text FROM ${schema}.user_stats ORDER BY user_id`,
  );
  const terms = await admin.query<{ user_id: string; term: string; passages: number }>(
    `SELECT user_id, term, passages FROM ${schema}.term_stats ORDER BY user_id, term COLLATE "C"`,
  );
  return { users: users.rows, terms: terms.rows };
}

async function recount(schema: string) {
  const users = await admin.query<{ user_id: string; passages: string; terms: string }>(
    `SELECT user_id, count(*)::text AS passages, sum(term_count)::text AS terms
     FROM ${schema}.passages GROUP BY user_id ORDER BY user_id`,
  );
  const terms = await admin.query<{ user_id: string; term: string; passages: number }>(
    `SELECT p.user_id, t.term, count(*)::int AS passages
     FROM ${schema}.passages AS p CROSS JOIN unnest(tsvector_to_array(p.tsv)) AS t(term)
     GROUP BY p.user_id, t.term ORDER BY p.user_id, t.term COLLATE "C"`,
  );
  return { users: users.rows, terms: terms.rows };
}

const open = (schema: string, poolSize = 4, options: Partial<PostgresSearchIndexOptions> = {}) =>
  new PostgresSearchIndex({ connectionString: DATABASE_URL, schema, poolSize, ...options });

// Quick search has two paths, held to the same contract: scored from the user's postings in memory
// (every search here waits for them), and scored in SQL (no memory for postings).
const PATHS: [string, Partial<PostgresSearchIndexOptions>][] = [
  ["quick search scored from postings in memory", { loadPostingsInBackground: false }],
  ["quick search scored in SQL", { postingsCacheBytes: 0 }],
];
for (const [path, options] of PATHS) {
  searchIndexContract(`Postgres full-text, ${path} (real Postgres at ${redacted})`, () => {
    const schema = newSchema();
    const index = open(schema, 4, options);
    return Promise.resolve({
      index,
      async cleanup() {
        await index.close();
        await dropSchema(schema);
      },
    });
  });
}

const newFile = (userId: string = randomUUID()): FileRef => ({ userId, fileId: randomUUID() });

/** Yields to the event loop every few passages, so other queries interleave with the stream. */
async function* trickle(passages: readonly ExtractedPassage[], every = 50): AsyncGenerator<ExtractedPassage> {
  for (const [i, p] of passages.entries()) {
    if (i % every === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    yield p;
  }
}

describe("PostgresSearchIndex", () => {
  let schema: string;
  let index: PostgresSearchIndex;
  const others: SearchIndex[] = [];

  beforeEach(() => {
    schema = newSchema();
    index = open(schema);
  });

  afterEach(async () => {
    for (const other of others.splice(0)) await other.close();
    await index.close();
    await dropSchema(schema);
  });

  const rowsOf = async (file: FileRef) =>
    (
      await admin.query<{ content: string; ord: number }>(
        `SELECT content, ord FROM ${schema}.passages WHERE user_id = $1 AND file_id = $2 ORDER BY ord`,
        [file.userId, file.fileId],
      )
    ).rows;

  it("scores quick search from postings in memory as the SQL does, catching up with another process's writes", async () => {
    const memory = open(schema, 4, { loadPostingsInBackground: false });
    const sql = open(schema, 4, { postingsCacheBytes: 0 });
    others.push(memory, sql);
    const userId = randomUUID();
    const files = Array.from({ length: 6 }, () => newFile(userId));
    const write = (file: FileRef, label: string, n: number) =>
      index.replaceFilePassages(
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
    await index.deleteFilePassages(files[0]!);
    await index.deleteFilePassages(files[1]!);
    await write(newFile(userId), "third", 10);
    await same();
    expect((await memory.search({ userId, text: "first0", limit: 5 })).length).toBe(0);
    expect((await memory.search({ userId, text: "second3", limit: 50 })).length).toBe(15);
  });

  it("answers a user's first quick search in SQL while their postings load, says when they are, and the same after", async () => {
    const loaded: PostingsLoaded[] = [];
    // The default: postings load behind the first search.
    const background = open(schema, 4, { onPostingsLoaded: (l) => loaded.push(l) });
    others.push(background);
    const file = newFile();
    await index.replaceFilePassages(
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
    const tiny = open(schema, 4, {
      postingsCacheBytes: 1_000,
      loadPostingsInBackground: false,
      onPostingsLoaded: (l) => loaded.push(l),
    });
    const sql = open(schema, 4, { postingsCacheBytes: 0 });
    others.push(tiny, sql);
    const file = newFile();
    await index.replaceFilePassages(
      file,
      streamOf(
        Array.from({ length: 60 }, (_, i) => textPassage(`crowded words ${i} ${"more ".repeat(i % 7)}`)),
      ),
    );
    const query = { userId: file.userId, text: "more words", limit: 10 };
    expect(await tiny.search(query)).toEqual(await sql.search(query));
    expect(loaded).toMatchObject([{ userId: file.userId, passages: 60, kept: false }]);
  });

  it("concurrent replacements of one file from two pools leave exactly one set, never both", async () => {
    const second = open(schema);
    others.push(second);
    const file = newFile();
    const setOf = (label: string) =>
      Array.from({ length: 1_200 }, (_, i) => textPassage(`${label} racing passage ${i}`, 1, i + 1));
    const first = setOf("first");
    const other = setOf("second");
    for (let round = 0; round < 5; round++) {
      const counts = await Promise.all([
        index.replaceFilePassages(file, trickle(first)),
        second.replaceFilePassages(file, trickle(other)),
      ]);
      expect(counts).toEqual([1_200, 1_200]);
      const rows = await rowsOf(file);
      expect(rows).toHaveLength(1_200);
      const labels = new Set(rows.map((r) => r.content.split(" ")[0]));
      expect(labels.size).toBe(1);
      expect(rows.map((r) => r.ord)).toEqual(Array.from({ length: 1_200 }, (_, i) => i));
    }
    expect(await index.search({ userId: file.userId, text: "racing", limit: 5_000 })).toHaveLength(1_200);
  });

  it("a search during a long replacement sees the whole old set or the whole new set, nothing else", async () => {
    const file = newFile();
    const old = Array.from({ length: 300 }, (_, i) => textPassage(`old heron passage ${i}`, 1, i + 1));
    const fresh = Array.from({ length: 3_000 }, (_, i) => textPassage(`new heron passage ${i}`, 2, i + 1));
    await index.replaceFilePassages(file, streamOf(old));

    const searcher = open(schema);
    others.push(searcher);
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
    expect(await index.replaceFilePassages(file, trickle(fresh, 20))).toBe(3_000);
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
    await index.replaceFilePassages(file, streamOf([textPassage("before the race")]));
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
    const replacing = index.replaceFilePassages(file, slow());
    await replacingMidway;
    const deleting = index.deleteFilePassages(file);
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
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.query(`CREATE TABLE ${schema}.passages (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, user_id text NOT NULL, file_id text NOT NULL,
      ord integer NOT NULL, content text NOT NULL, locator json NOT NULL, tsv tsvector NOT NULL,
      CONSTRAINT passages_file_ord_key UNIQUE (user_id, file_id, ord))`);
    const file = newFile();
    const vector = Float32Array.from([0.6, 0.8]);
    expect(
      await index.vectorSearch({ userId: file.userId, slot: "remote", space: "s", vector, limit: 5 }),
    ).toEqual([]);
    await index.replaceFilePassages(
      file,
      streamOf([{ ...textPassage("upgraded puffin"), vectors: { remote: { space: "s", vector } } }]),
    );
    expect(await index.search({ userId: file.userId, text: "puffin", limit: 5 })).toHaveLength(1);
    const hits = await index.vectorSearch({
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
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.query(`
      CREATE TEXT SEARCH DICTIONARY ${schema}.locus_english_stem (TEMPLATE = snowball, LANGUAGE = english);
      CREATE TEXT SEARCH CONFIGURATION ${schema}.locus_english (COPY = pg_catalog.english);
      ALTER TEXT SEARCH CONFIGURATION ${schema}.locus_english
        ALTER MAPPING REPLACE pg_catalog.english_stem WITH ${schema}.locus_english_stem;`);
    await admin.query(`CREATE TABLE ${schema}.passages (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, user_id text NOT NULL, file_id text NOT NULL,
      ord integer NOT NULL, content text NOT NULL, locator json NOT NULL, tsv tsvector NOT NULL,
      CONSTRAINT passages_file_ord_key UNIQUE (user_id, file_id, ord))`);
    const file = newFile();
    for (const [ord, content] of ["She gave generously.", "A generous gift.", "Le café"].entries()) {
      await admin.query(
        `INSERT INTO ${schema}.passages (user_id, file_id, ord, content, locator, tsv)
         VALUES ($1, $2, $3, $4, $5, to_tsvector('${schema}.locus_english'::regconfig, lower($4)))`,
        [file.userId, file.fileId, ord, content, JSON.stringify({ page: 1, line: ord + 1 })],
      );
    }
    const lines = async (text: string) =>
      (await index.search({ userId: file.userId, text, limit: 5 })).map((h) => h.locator.line).sort();
    expect(await lines("generous")).toEqual([1, 2]);
    expect(await lines("general")).toEqual([1, 2]);
    expect(await lines("cafe")).toEqual([3]);
    const made = await admin.query<{ tsv: string }>(
      `SELECT tsv::text AS tsv FROM ${schema}.passages WHERE user_id = $1 ORDER BY ord`,
      [file.userId],
    );
    expect(made.rows.map((r) => r.tsv)).toEqual([
      "'gave':2 'gener':3 'she':1",
      "'a':1 'gener':2 'gift':3",
      "'cafe':2 'le':1",
    ]);
    const config = await admin.query(
      `SELECT 1 FROM pg_ts_config c JOIN pg_namespace n ON n.oid = c.cfgnamespace WHERE n.nspname = $1`,
      [schema],
    );
    expect(config.rowCount).toBe(0);
  });

  it("upgrades an index made before BM25: term counts and the users' statistics made from the passages", async () => {
    // The layout of terms made in JavaScript without BM25's counts: tsvectors with positions only.
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.query(`CREATE TABLE ${schema}.passages (
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
        `INSERT INTO ${schema}.passages (user_id, file_id, ord, content, locator, tsv) VALUES ($1, $2, $3, $4, $5, $6)`,
        [file.userId, file.fileId, ord, content, JSON.stringify({ page: 1, line: ord + 1 }), tsv],
      );
    }
    const [hit] = await index.search({ userId: a.userId, text: "swap", limit: 5 });
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
    expect(await statistics(schema)).toEqual(await recount(schema));
    const counted = await admin.query(`SELECT term_count, repeats FROM ${schema}.passages ORDER BY id`);
    expect(counted.rows).toEqual([
      { term_count: 4, repeats: { swap: 3 } },
      { term_count: 3, repeats: null },
      { term_count: 2, repeats: null },
    ]);
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
    await Promise.all(files.map((f, i) => index.replaceFilePassages(f, trickle(texts(i, 40 + i), 7))));
    expect(await statistics(schema)).toEqual(await recount(schema));
    await index.replaceFilePassages(files[0]!, streamOf(texts(9, 5)));
    await index.deleteFilePassages(files[1]!);
    await index.replaceFilePassages(newFile(), streamOf(texts(5, 3)));
    expect(await statistics(schema)).toEqual(await recount(schema));
    await index.deleteFilePassages(files[0]!);
    await index.deleteFilePassages(files[2]!);
    const left = await statistics(schema);
    expect(left).toEqual(await recount(schema));
    // Nothing is kept for a user with no passages left.
    expect(left.users.some((u) => u.user_id === user)).toBe(false);
    expect(left.terms.some((t) => t.user_id === user)).toBe(false);
  });

  it("keeps its tables in its own schema, and two processes starting together create them once", async () => {
    const a = open(schema);
    const b = open(schema);
    others.push(a, b);
    await Promise.all([a.check(), b.check(), index.check()]);
    const tables = await admin.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = $1",
      [schema],
    );
    expect(tables.rows.map((r) => r.table_name).sort()).toEqual([
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
    await index.check();
    const gin = await admin.query<{ indexname: string; indexdef: string }>(
      "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND indexdef LIKE '%USING gin%'",
      [schema],
    );
    const client = await admin.connect();
    try {
      // On a table this small the planner rightly prefers the (user_id, file_id, ord) btree; with
      // it and sequential scans out of the way (rolled back below) the plan shows whether the GIN
      // index alone can answer both conditions, which is what it does for users with many passages.
      await client.query("BEGIN");
      await client.query(`ALTER TABLE ${schema}.passages DROP CONSTRAINT passages_file_ord_key`);
      await client.query("SET LOCAL enable_seqscan = off");
      const plan = await client.query<{ "QUERY PLAN": string }>(
        `EXPLAIN SELECT id FROM ${schema}.passages
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

  it("behaves like the embedded index for stop words and Latin diacritics", async () => {
    const sqlite = new SqliteSearchIndex(":memory:");
    others.push(sqlite);
    const file = newFile();
    const passages = [
      textPassage("Only the résumé was between us.", 1, 1),
      textPassage("Ёлка и ροδος", 1, 2),
      textPassage("यह भाषा सुंदर है", 1, 3),
      textPassage("भारत एक देश है", 1, 4),
    ];
    await index.replaceFilePassages(file, streamOf(passages));
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
      expect([text, await lines(index)]).toEqual([text, await lines(sqlite)]);
    }
  });

  it("indexes passages whose text carries NUL characters instead of failing the file", async () => {
    const file = newFile();
    expect(await index.replaceFilePassages(file, streamOf([textPassage("nul\u0000byte in a pdf")]))).toBe(1);
    expect(
      (await index.search({ userId: file.userId, text: "pdf", limit: 5 })).map((h) => h.content),
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
    await index.replaceFilePassages(
      file,
      streamOf([{ content: "ordered keys", locator } as ExtractedPassage]),
    );
    const [hit] = await index.search({ userId: file.userId, text: "ordered", limit: 1 });
    expect(JSON.stringify(hit?.locator)).toBe(JSON.stringify(locator));
  });

  it("rejects a schema name that would need quoting", () => {
    expect(() => open("Robert'); DROP")).toThrow(/lower-case letters, digits and underscores/);
  });
});
