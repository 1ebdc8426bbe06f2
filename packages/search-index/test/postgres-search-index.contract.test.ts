// The SearchIndex contract on a real Postgres, on both of quick search's paths.

import type { PostgresSearchIndexOptions } from "../src/postgres-search-index.ts";
import { searchIndexContract } from "./search-index.contract.ts";
import { passageVectorWriterContract } from "./vector-writer.contract.ts";
import { dropSchema, newSchema, open, redacted, useTestDatabase } from "./postgres-test-database.ts";

useTestDatabase();

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

passageVectorWriterContract(`Postgres (real Postgres at ${redacted})`, () => {
  const schema = newSchema();
  const index = open(schema);
  return Promise.resolve({
    index,
    async cleanup() {
      await index.close();
      await dropSchema(schema);
    },
  });
});
