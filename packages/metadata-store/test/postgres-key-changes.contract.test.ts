import { randomUUID } from "node:crypto";
import pg from "pg";
import { pollUntil } from "@locus/testing/polling";
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

/** A busy CI may hold a notice up for a while, never for 10 s. */
const WAIT = { timeoutMs: 10_000, everyMs: 20 };

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

/** Runs `run` with a listener of `here`'s key changes, once it listens; stops listening after. */
async function listening(run: (heard: Heard) => Promise<void>): Promise<void> {
  const heard = new Heard();
  const feed = here.watchKeyChanges(heard)!;
  try {
    expect(
      await pollUntil(
        () => heard.lives,
        (n) => n === 1,
        WAIT,
      ),
    ).toBe(1);
    await run(heard);
  } finally {
    await feed.close();
  }
}

describe("watchKeyChanges on Postgres", () => {
  it("tells of revocations, renames, owners changed by SQL or deleted, from any process; not of a key's use or another schema", async () => {
    await listening(async (heard) => {
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

      await pollUntil(
        () => heard.changes.length,
        (n) => n >= 6,
        WAIT,
      );
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
    });
  });

  it("tells of this process's own revocation as it returns, before the database's notice", async () => {
    await listening(async (heard) => {
      const { key } = await userWithKey(here);
      await here.revokeKey({ id: key.id });
      expect(heard.changes).toContainEqual({ keyId: key.id });
    });
  });

  it("says when listening was lost, listens again, and hears changes after that", async () => {
    await listening(async (heard) => {
      // As when the server restarts or a proxy drops the idle connection.
      const { rowCount } = await admin.query(
        "select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1",
        [`locus key changes ${schema}`.slice(0, 63)],
      );
      expect(rowCount).toBe(1);
      expect(
        await pollUntil(
          () => heard.losses,
          (n) => n === 1,
          WAIT,
        ),
      ).toBe(1);
      expect(
        await pollUntil(
          () => heard.lives,
          (n) => n === 2,
          WAIT,
        ),
      ).toBe(2);
      const { key } = await userWithKey(elsewhere);
      await elsewhere.revokeKey({ id: key.id });
      const heardIt = () => heard.changes.some((c) => "keyId" in c && c.keyId === key.id);
      expect(await pollUntil(heardIt, Boolean, WAIT)).toBe(true);
    });
    // Closed: nothing listens any more.
    const { rows } = await admin.query(
      "select count(*)::int as n from pg_stat_activity where application_name = $1",
      [`locus key changes ${schema}`.slice(0, 63)],
    );
    expect(rows[0].n).toBe(0);
  });
});
