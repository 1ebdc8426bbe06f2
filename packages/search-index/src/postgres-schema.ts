// Where the index keeps its tables, and how they are made and brought up to date (migrations).

import type pg from "pg";
import { rollbackAndRelease } from "./postgres-connection.ts";
import { termsOf } from "./postgres-terms.ts";

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** The index's schema and its tables, each named with the schema (see PostgresSearchIndex). */
export interface PostgresTables {
  schema: string;
  passages: string;
  generations: string;
  termStats: string;
  userStats: string;
  indexedFiles: string;
  fileAttributes: string;
  fileMetadata: string;
}

/** The tables of `schema`, which must be a name that never needs quoting. */
export function postgresTables(schema: string): PostgresTables {
  if (!SCHEMA_NAME.test(schema)) {
    throw new Error(
      `Search index schema ${JSON.stringify(schema)} must be lower-case letters, digits and underscores.`,
    );
  }
  return {
    schema,
    passages: `${schema}.passages`,
    generations: `${schema}.vector_generations`,
    termStats: `${schema}.term_stats`,
    userStats: `${schema}.user_stats`,
    indexedFiles: `${schema}.indexed_files`,
    fileAttributes: `${schema}.file_attributes`,
    fileMetadata: `${schema}.file_metadata`,
  };
}

/** The vector slots the passages table has columns for (`<slot>_space`, `<slot>_vector`). */
export const VECTOR_SLOTS = ["local", "remote"] as const;

/** Creates the schema and its tables, or brings older ones up to date, in one transaction. */
export async function migrate(pool: pg.Pool, tables: PostgresTables): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    // The indexer and search processes start together; one at a time, or CREATE ... IF NOT
    // EXISTS races into duplicate-key errors in the catalog. The key is database-wide because
    // CREATE EXTENSION is.
    await client.query("SELECT pg_advisory_xact_lock(hashtextextended('locus-search-index:migrate', 0))");
    const exists = async (sql: string, params: unknown[]) =>
      (await client.query<{ found: boolean }>(`SELECT EXISTS (${sql}) AS found`, params)).rows[0]?.found ===
      true;

    // Checked first: CREATE SCHEMA IF NOT EXISTS needs CREATE on the database even when the
    // schema is already there, which an operator's least-privilege role may not have.
    if (!(await exists("SELECT 1 FROM pg_namespace WHERE nspname = $1", [tables.schema]))) {
      await client.query(`CREATE SCHEMA ${tables.schema}`);
    }

    let composite = await exists("SELECT 1 FROM pg_extension WHERE extname = 'btree_gin'", []);
    if (!composite) {
      // btree_gin is trusted (PG 13+), so a database owner may install it too. It goes to
      // `public`, never into this schema: dropping this schema must not drop an extension other
      // schemas' indexes use. Where it cannot be installed, the plain layout below still works.
      await client.query("SAVEPOINT btree_gin");
      try {
        await client.query("CREATE EXTENSION IF NOT EXISTS btree_gin WITH SCHEMA public");
        await client.query("RELEASE SAVEPOINT btree_gin");
        composite = true;
      } catch {
        await client.query("ROLLBACK TO SAVEPOINT btree_gin");
      }
    }

    const missing = async (name: string) =>
      !(await exists("SELECT 1 WHERE to_regclass($1) IS NOT NULL", [`${tables.schema}.${name}`]));

    // Each object is looked up before it is created: CREATE INDEX IF NOT EXISTS takes a SHARE lock
    // on the table before it finds the index there, so a search process starting while the
    // indexer streams a long replacement would wait for that replacement to commit.
    if (await missing("passages")) {
      // user_id and file_id are text, not uuid: the port treats ids as opaque strings, and a uuid
      // column would make an upper-case spelling of a user's id that same user. The locator is
      // json, not jsonb: it is never queried inside, and json gives it back exactly as given
      // (jsonb reorders keys, which would change API responses between the two shapes).
      // The unique key serves replace and delete by file, and is a last guard against duplicates.
      await client.query(`
        CREATE TABLE ${tables.passages} (
          id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          user_id text NOT NULL,
          file_id text NOT NULL,
          ord integer NOT NULL,
          content text NOT NULL,
          locator json NOT NULL,
          tsv tsvector NOT NULL,
          term_count integer NOT NULL,
          repeats jsonb,
          local_space text,
          local_vector bytea,
          remote_space text,
          remote_vector bytea,
          CONSTRAINT passages_file_ord_key UNIQUE (user_id, file_id, ord)
        )`);
    }
    // Tables made before ai mode: the vector columns come NULL until `locus index rebuild`.
    const columns = await client.query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'passages'`,
      [tables.schema],
    );
    const have = new Set(columns.rows.map((c) => c.column_name));
    for (const slot of VECTOR_SLOTS) {
      if (!have.has(`${slot}_vector`)) {
        await client.query(
          `ALTER TABLE ${tables.passages} ADD COLUMN IF NOT EXISTS ${slot}_space text,
                                        ADD COLUMN IF NOT EXISTS ${slot}_vector bytea`,
        );
      }
    }
    // Indexes made before terms were made in JavaScript had Postgres stem them (a text-search
    // configuration of the schema's own), and those made before BM25 kept no term counts: their
    // terms are made again from the passages' text, and the configuration dropped.
    const configured = await exists(
      `SELECT 1 FROM pg_ts_config c JOIN pg_namespace n ON n.oid = c.cfgnamespace
       WHERE n.nspname = $1 AND c.cfgname = 'locus_english'`,
      [tables.schema],
    );
    const uncounted = !have.has("term_count");
    if (uncounted) {
      await client.query(
        `ALTER TABLE ${tables.passages} ADD COLUMN term_count integer, ADD COLUMN repeats jsonb`,
      );
    }
    if (configured || uncounted) await remakeTerms(client, tables);
    if (uncounted) await client.query(`ALTER TABLE ${tables.passages} ALTER COLUMN term_count SET NOT NULL`);
    if (configured) {
      await client.query(`
        DROP TEXT SEARCH CONFIGURATION ${tables.schema}.locus_english;
        DROP TEXT SEARCH DICTIONARY ${tables.schema}.locus_english_stem;`);
    }
    if (await missing("vector_generations")) {
      await client.query(
        `CREATE TABLE ${tables.generations} (user_id text PRIMARY KEY, generation bigint NOT NULL)`,
      );
    }
    // BM25's statistics, counted from the passages when first made or when their terms were made
    // again; from then on each transaction that changes passages changes them (applyStatistics).
    const uncountedStats = (await missing("term_stats")) || (await missing("user_stats"));
    if (uncountedStats) {
      await client.query(`
        CREATE TABLE IF NOT EXISTS ${tables.termStats} (
          user_id text NOT NULL,
          term text NOT NULL,
          passages integer NOT NULL,
          PRIMARY KEY (user_id, term)
        );
        CREATE TABLE IF NOT EXISTS ${tables.userStats} (
          user_id text PRIMARY KEY,
          passages bigint NOT NULL,
          terms bigint NOT NULL
        )`);
    }
    if (uncountedStats || configured || uncounted) {
      await client.query(`
        DELETE FROM ${tables.termStats};
        DELETE FROM ${tables.userStats};
        INSERT INTO ${tables.termStats} (user_id, term, passages)
          SELECT p.user_id, t.term, count(*) FROM ${tables.passages} AS p
          CROSS JOIN unnest(tsvector_to_array(p.tsv)) AS t(term) GROUP BY p.user_id, t.term;
        INSERT INTO ${tables.userStats} (user_id, passages, terms)
          SELECT user_id, count(*), sum(term_count) FROM ${tables.passages} GROUP BY user_id`);
    }
    // Each indexed file's version (the user's generation when it was last written), so a search
    // process holding a user's postings in memory reads again only the files that changed.
    if (await missing("indexed_files")) {
      await client.query(`
        CREATE TABLE ${tables.indexedFiles} (
          user_id text NOT NULL,
          file_id text NOT NULL,
          version bigint NOT NULL,
          PRIMARY KEY (user_id, file_id)
        );
        INSERT INTO ${tables.indexedFiles} (user_id, file_id, version)
          SELECT DISTINCT user_id, file_id, 0 FROM ${tables.passages}`);
    }
    // What a search's filter asks of a file (type, upload instant, metadata as metadataTerms gives
    // it), written and deleted in the transaction that writes or deletes its passages. A file
    // indexed before filters existed has no row: only filters on file ids alone find it. The
    // metadata's key serves the filter's lookup of (user, key, value), its second index deletes.
    if (await missing("file_attributes")) {
      await client.query(`
        CREATE TABLE ${tables.fileAttributes} (
          user_id text NOT NULL,
          file_id text NOT NULL,
          file_type text NOT NULL,
          created_at timestamptz NOT NULL,
          PRIMARY KEY (user_id, file_id)
        )`);
    }
    if (await missing("file_metadata")) {
      await client.query(`
        CREATE TABLE ${tables.fileMetadata} (
          user_id text NOT NULL,
          key text NOT NULL,
          value text NOT NULL,
          file_id text NOT NULL,
          PRIMARY KEY (user_id, key, value, file_id)
        );
        CREATE INDEX file_metadata_file_idx ON ${tables.fileMetadata} (user_id, file_id)`);
    }
    const gin = composite ? "passages_user_tsv_idx" : "passages_tsv_idx";
    if ((await missing("passages_user_tsv_idx")) && (await missing("passages_tsv_idx"))) {
      await client.query(
        `CREATE INDEX ${gin} ON ${tables.passages} USING gin (${composite ? "user_id, tsv" : "tsv"})`,
      );
    }
    await client.query("COMMIT");
    client.release();
  } catch (err) {
    await rollbackAndRelease(client);
    throw err;
  }
}

/** Every passage's terms made again from its content (a migration, inside its transaction). */
async function remakeTerms(client: pg.PoolClient, tables: PostgresTables): Promise<void> {
  for (let last = "0"; ;) {
    const { rows } = await client.query<{ id: string; content: string }>(
      `SELECT id, content FROM ${tables.passages} WHERE id > $1 ORDER BY id LIMIT 1000`,
      [last],
    );
    if (rows.length === 0) return;
    const terms = rows.map((r) => termsOf(r.content));
    await client.query(
      `UPDATE ${tables.passages} AS p SET tsv = t.tsv::tsvector, term_count = t.term_count, repeats = t.repeats::jsonb
       FROM unnest($1::bigint[], $2::text[], $3::int[], $4::text[]) AS t(id, tsv, term_count, repeats)
       WHERE p.id = t.id`,
      [
        rows.map((r) => r.id),
        terms.map((t) => t.tsv),
        terms.map((t) => t.count),
        terms.map((t) => t.repeats),
      ],
    );
    last = rows[rows.length - 1]!.id;
  }
}
