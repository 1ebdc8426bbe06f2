import { randomUUID } from "node:crypto";
import pg from "pg";
import type { KeyChange, KeyChangeListener, KyselyMetadataStore } from "../src/index.ts";
import { createPostgresMetadataStore } from "../src/postgres-metadata-store.ts";

/**
 * watchKeyChanges on a real PostgreSQL server: what one process hears of changes to keys and
 * their owners, made by another process's store, by an operator's SQL, or in another deployment's
 * schema of the same database.
 */
const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const freshSchema = () => `locus_test_${randomUUID().replaceAll("-", "")}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A listener that writes down what it is told. */
class Heard implements KeyChangeListener {
  changes: KeyChange[] = [];
  lives = 0;
  losses = 0;
  changed(change: KeyChange) {
    this.changes.push(change);
  }
  live() {
    this.lives++;
  }
  lost() {
    this.losses++;
  }
}

/** Waits until `done` holds; a busy CI may hold a notice up for a while, never for 10 s. */
async function until(done: () => boolean, what: string): Promise<void> {
  for (const started = Date.now(); !done(); await sleep(20)) {
    if (Date.now() - started > 10_000) throw new Error(`still waiting for ${what}`);
  }
}

let admin: pg.Pool;
const schema = freshSchema();
const otherSchema = freshSchema();
let here: KyselyMetadataStore;
let elsewhere: KyselyMetadataStore;
let otherDeployment: KyselyMetadataStore;

beforeAll(async () => {
  admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
  here = createPostgresMetadataStore({ connectionString: DATABASE_URL, schema });
  elsewhere = createPostgresMetadataStore({ connectionString: DATABASE_URL, schema });
  otherDeployment = createPostgresMetadataStore({ connectionString: DATABASE_URL, schema: otherSchema });
  await here.migrate();
  await elsewhere.migrate();
  await otherDeployment.migrate();
});

afterAll(async () => {
  await Promise.all([here.close(), elsewhere.close(), otherDeployment.close()]);
  await admin.query(`drop schema if exists "${schema}" cascade`);
  await admin.query(`drop schema if exists "${otherSchema}" cascade`);
  await admin.end();
});

async function userWithKey(store: KyselyMetadataStore) {
  const user = await store.createUser({ email: `${randomUUID()}@example.test`, plan: "free" });
  const key = await store.createKey({
    userId: user.id,
    name: "build server",
    type: "live",
    displayPrefix: "lk_live_abcd",
    hash: randomUUID(),
  });
  return { user, key };
}

describe("watchKeyChanges on Postgres", () => {
  it("tells of revocations, renames, owners changed by SQL or deleted, from any process; not of a key's use or another schema", async () => {
    const heard = new Heard();
    const feed = here.watchKeyChanges(heard)!;
    try {
      await until(() => heard.lives === 1, "listening");
      const { user, key } = await userWithKey(elsewhere);
      const second = await elsewhere.createKey({
        userId: user.id,
        name: "laptop",
        type: "test",
        displayPrefix: "lk_test_abcd",
        hash: randomUUID(),
      });
      // Neither a key's use (written once a minute per key) nor another deployment's changes.
      await elsewhere.touchKey(key.id, new Date().toISOString());
      const stranger = await userWithKey(otherDeployment);
      await otherDeployment.revokeKey({ id: stranger.key.id });

      await elsewhere.revokeKey({ id: key.id });
      await elsewhere.renameKey({ id: second.id, userId: user.id, name: "old laptop" });
      await admin.query(`update "${schema}".users set plan = 'pro' where id = $1`, [user.id]);
      await admin.query(`delete from "${schema}".users where id = $1`, [user.id]);

      await until(() => heard.changes.length >= 6, "the notices");
      await sleep(300);
      expect(heard.changes.slice(0, 3)).toEqual([
        { keyId: key.id },
        { keyId: second.id },
        { userId: user.id },
      ]);
      // The user's deletion takes both keys with it, in the order the database fires its triggers.
      expect(heard.changes.slice(3)).toHaveLength(3);
      expect(heard.changes.slice(3)).toEqual(
        expect.arrayContaining([{ userId: user.id }, { keyId: key.id }, { keyId: second.id }]),
      );
    } finally {
      await feed.close();
    }
  });

  it("tells of this process's own revocation as it returns, before the database's notice", async () => {
    const heard = new Heard();
    const feed = here.watchKeyChanges(heard)!;
    try {
      await until(() => heard.lives === 1, "listening");
      const { key } = await userWithKey(here);
      await here.revokeKey({ id: key.id });
      expect(heard.changes).toContainEqual({ keyId: key.id });
    } finally {
      await feed.close();
    }
  });

  it("says when listening was lost, listens again, and hears changes after that", async () => {
    const heard = new Heard();
    const feed = here.watchKeyChanges(heard)!;
    try {
      await until(() => heard.lives === 1, "listening");
      // As when the server restarts or a proxy drops the idle connection.
      const { rowCount } = await admin.query(
        "select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1",
        [`locus key changes ${schema}`.slice(0, 63)],
      );
      expect(rowCount).toBe(1);
      await until(() => heard.losses === 1, "the loss");
      await until(() => heard.lives === 2, "listening again");
      const { key } = await userWithKey(elsewhere);
      await elsewhere.revokeKey({ id: key.id });
      await until(() => heard.changes.some((c) => "keyId" in c && c.keyId === key.id), "the notice");
    } finally {
      await feed.close();
    }
    // Closed: nothing listens any more.
    const { rows } = await admin.query(
      "select count(*)::int as n from pg_stat_activity where application_name = $1",
      [`locus key changes ${schema}`.slice(0, 63)],
    );
    expect(rows[0].n).toBe(0);
  });
});
