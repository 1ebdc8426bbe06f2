import { randomUUID } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtractedPassage, StoredLocator } from "@locus/contracts";
import { extractPdf } from "@locus/pdf-reader";
import {
  dropTestSchema,
  PARITY_MANUALS,
  parityQueries,
  QUALITY_FIXTURES,
  TEST_DATABASE_URL,
} from "@locus/testing";
import { PostgresSearchIndex } from "../src/postgres-search-index.ts";
import { SqliteSearchIndex } from "../src/sqlite-search-index.ts";
import type { PassageHit, SearchIndex } from "../src/search-index.ts";
import { streamOf, textPassage } from "./search-index.contract.ts";

/**
 * Ranking parity of the two shapes' indexes: real manuals (bench/fixtures/quality), the quality
 * set's queries, one user among others. Both must rank with BM25 on that user's statistics, so
 * the first five results (file and place) must be the same for every query. A difference is
 * listed query by query in the failure, not averaged away. (Elasticsearch is held to the same
 * terms by the contract suite; its BM25 uses the shard's statistics, see bm25.ts.)
 */
const TOP = 5;

describe("ranking parity: SQLite FTS5 and real PostgreSQL (from memory and in SQL) rank the same real manuals alike", () => {
  const userId = randomUUID();
  const names = new Map<string, string>();
  let dir: string;
  let sqlite: SqliteSearchIndex;
  let postgres: PostgresSearchIndex;
  /** The same PostgreSQL passages, every quick search scored in SQL rather than from memory. */
  let postgresSql: PostgresSearchIndex;
  const schema = `locus_parity_${randomUUID().replaceAll("-", "").slice(0, 12)}`;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "locus-parity-"));
    sqlite = new SqliteSearchIndex(join(dir, "index.db"));
    postgres = new PostgresSearchIndex({
      connectionString: TEST_DATABASE_URL,
      schema,
      loadPostingsInBackground: false,
    });
    postgresSql = new PostgresSearchIndex({
      connectionString: TEST_DATABASE_URL,
      schema,
      postingsCacheBytes: 0,
    });
    const both: SearchIndex[] = [sqlite, postgres];
    for (const name of PARITY_MANUALS) {
      const extraction = await extractPdf(await readFile(join(QUALITY_FIXTURES, name)));
      const passages: ExtractedPassage[] = [];
      for await (const p of extraction.passages) passages.push(p);
      const file = { userId, fileId: randomUUID() };
      names.set(file.fileId, name);
      for (const index of both) await index.replaceFilePassages(file, streamOf(passages));
    }
    // Another user's passages with the same words: the index's totals change, this user's must not.
    const crowd = Array.from({ length: 300 }, (_, i) =>
      textPassage(`font configuration file encoding speech synthesis voice ${"pattern ".repeat(i % 9)}${i}`),
    );
    const other = { userId: randomUUID(), fileId: randomUUID() };
    for (const index of both) await index.replaceFilePassages(other, streamOf(crowd));
  }, 120_000);

  afterAll(async () => {
    await sqlite.close();
    await postgres.close();
    await postgresSql.close();
    await dropTestSchema(schema);
    await rm(dir, { recursive: true, force: true });
  });

  const placeOf = (hit: PassageHit) => {
    const l = hit.locator as StoredLocator & { page?: number; line?: number; line_end?: number };
    return `${names.get(hit.fileId)} p${l.page}:${l.line}-${l.line_end ?? l.line}`;
  };

  it("gives the same first five results, file and place, for each of at least 30 real queries", async () => {
    const queries = parityQueries();
    expect(queries.length).toBeGreaterThanOrEqual(30);
    const differences: string[] = [];
    let found = 0;
    for (const text of queries) {
      const a = (await sqlite.search({ userId, text, limit: TOP })).map(placeOf);
      const b = (await postgres.search({ userId, text, limit: TOP })).map(placeOf);
      const c = (await postgresSql.search({ userId, text, limit: TOP })).map(placeOf);
      if (a.length > 0) found += 1;
      if (a.join("\n") !== b.join("\n") || b.join("\n") !== c.join("\n")) {
        differences.push(
          `${JSON.stringify(text)}\n  sqlite:   ${a.join(" | ")}\n  postgres: ${b.join(" | ")}\n  postgres scored in SQL: ${c.join(" | ")}`,
        );
      }
    }
    // The queries were written against these manuals: nearly all find something.
    expect(found).toBeGreaterThanOrEqual(queries.length * 0.9);
    expect(differences).toEqual([]);
  });
});
