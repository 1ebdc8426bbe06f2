import { randomUUID } from "node:crypto";
import pg from "pg";
import { createPostgresMetadataStore } from "../src/postgres-metadata-store.ts";
import { eventStoreContract } from "./event-store.contract.ts";
import { webhookStoreContract } from "./webhook-store.contract.ts";

const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

// Each test in a fresh schema of its own, created by the suite's migrate() and dropped after.
const postgres = () => {
  const schema = `locus_test_${randomUUID().replaceAll("-", "")}`;
  const store = createPostgresMetadataStore({ connectionString: DATABASE_URL, schema });
  return Promise.resolve({
    store,
    async cleanup() {
      await store.close();
      const admin = new pg.Client({ connectionString: DATABASE_URL });
      await admin.connect();
      try {
        await admin.query(`drop schema if exists "${schema}" cascade`);
      } finally {
        await admin.end();
      }
    },
  });
};

webhookStoreContract("Postgres", postgres);
eventStoreContract("Postgres", postgres);
