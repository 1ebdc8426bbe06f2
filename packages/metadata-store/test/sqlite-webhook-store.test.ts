import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSqliteMetadataStore } from "../src/sqlite-metadata-store.ts";
import { eventStoreContract } from "./event-store.contract.ts";
import { webhookStoreContract } from "./webhook-store.contract.ts";

const sqlite = async () => {
  const dir = await mkdtemp(join(tmpdir(), "locus-webhooks-"));
  const store = createSqliteMetadataStore(join(dir, "locus.db"));
  return {
    store,
    async cleanup() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
};

webhookStoreContract("SQLite", sqlite);
eventStoreContract("SQLite", sqlite);
