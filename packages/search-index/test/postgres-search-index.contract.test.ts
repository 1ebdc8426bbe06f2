// The SearchIndex contract on a real Postgres, on both of quick search's paths.

import type { PostgresSearchIndexOptions } from "../src/postgres-search-index.ts";
import { searchIndexContract, viaApproximateIndex } from "./search-index.contract.ts";
import { passageVectorWriterContract } from "./vector-writer.contract.ts";
import { dropSchema, newSchema, open, redacted, useTestDatabase } from "./postgres-test-database.ts";

useTestDatabase();

// Quick search has two paths, held to the same contract: scored from the user's postings in memory
// (every search here waits for them), and scored in SQL (no memory for postings). Vector search
// has two too: the second run answers it by the users' approximate indexes.
const PATHS: [string, Partial<PostgresSearchIndexOptions>, boolean][] = [
  ["quick search scored from postings in memory", { loadPostingsInBackground: false }, false],
  ["quick search scored in SQL, vectors by the approximate index", { postingsCacheBytes: 0 }, true],
];
for (const [path, options, approximate] of PATHS) {
  searchIndexContract(`Postgres full-text, ${path} (real Postgres at ${redacted})`, () => {
    const schema = newSchema();
    const graph = approximate ? viaApproximateIndex() : undefined;
    const index = open(schema, 4, { ...options, ...graph?.options });
    return Promise.resolve({
      index: graph ? graph.wrap(index) : index,
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
