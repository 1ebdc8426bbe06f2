// The real Postgres the PostgresSearchIndex suites run against, and what they share: a schema of
// their own per index (dropped after), the statistics to compare, files and streams to write.

import { randomUUID } from "node:crypto";
import pg from "pg";
import type { ExtractedPassage } from "@locus/contracts";
import { PostgresSearchIndex, type PostgresSearchIndexOptions } from "../src/postgres-search-index.ts";
import type { FileRef, SearchIndex } from "../src/search-index.ts";

// A real Postgres is part of the build machine and of CI; without one these suites fail rather than
// skip, so a missing database can never pass for a green run.
const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
export const redacted = DATABASE_URL.replace(/\/\/([^:@/]+):[^@/]*@/, "//$1:***@");

export const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2, connectionTimeoutMillis: 5_000 });
const schemas = new Set<string>();

/**
 * Checks the database answers before the suite's tests, and drops what they left behind after.
 * Each suite calls it once, at its top.
 */
export function useTestDatabase(): void {
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
}

export const newSchema = () => {
  const schema = `locus_test_${randomUUID().replace(/-/g, "").slice(0, 16)}`;
  schemas.add(schema);
  return schema;
};

export async function dropSchema(schema: string): Promise<void> {
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  schemas.delete(schema);
}

/** The statistics the index keeps, and the same counted from its passages, in one shape. */
export async function statistics(schema: string) {
  const users = await admin.query<{ user_id: string; passages: string; terms: string }>(
    `SELECT user_id, passages::text, terms::text FROM ${schema}.user_stats ORDER BY user_id`,
  );
  const terms = await admin.query<{ user_id: string; term: string; passages: number }>(
    `SELECT user_id, term, passages FROM ${schema}.term_stats ORDER BY user_id, term COLLATE "C"`,
  );
  return { users: users.rows, terms: terms.rows };
}

export async function recount(schema: string) {
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

export const open = (schema: string, poolSize = 4, options: Partial<PostgresSearchIndexOptions> = {}) =>
  new PostgresSearchIndex({ connectionString: DATABASE_URL, schema, poolSize, ...options });

/** A test's own schema and index, and the other indexes it opens on that schema (`others`). */
export interface IndexPerTest {
  readonly schema: string;
  readonly index: PostgresSearchIndex;
  /** Closed after the test, before its schema is dropped. */
  readonly others: SearchIndex[];
}

/** Gives each test of the describe block it is called in a fresh schema and index, dropped after. */
export function indexPerTest(): IndexPerTest {
  const current = { others: [] as SearchIndex[] } as {
    schema: string;
    index: PostgresSearchIndex;
    others: SearchIndex[];
  };
  beforeEach(() => {
    current.schema = newSchema();
    current.index = open(current.schema);
  });
  afterEach(async () => {
    for (const other of current.others.splice(0)) await other.close();
    await current.index.close();
    await dropSchema(current.schema);
  });
  return current;
}

export const newFile = (userId: string = randomUUID()): FileRef => ({ userId, fileId: randomUUID() });

/** Yields to the event loop every few passages, so other queries interleave with the stream. */
export async function* trickle(
  passages: readonly ExtractedPassage[],
  every = 50,
): AsyncGenerator<ExtractedPassage> {
  for (const [i, p] of passages.entries()) {
    if (i % every === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    yield p;
  }
}
