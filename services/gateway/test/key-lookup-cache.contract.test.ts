import { randomUUID } from "node:crypto";
import pg from "pg";
import { pollUntil } from "@locus/testing/polling";
import {
  createPostgresMetadataStore,
  createSqliteMetadataStore,
  type ApiKeyStore,
  type KyselyMetadataStore,
} from "@locus/metadata-store";
import { KeyLookupCache, type KeyLookup } from "../src/key-lookup-cache.ts";

/**
 * The gateway's key lookups over a real PostgreSQL store: `gateway` is the gateway process's
 * store, `dashboard` another process's (a dashboard replica, the CLI) on the same schema.
 */
const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const schema = `locus_test_${randomUUID().replaceAll("-", "")}`;
/** A busy CI may hold a notice up for a while, never for 10 s. */
const WAIT = { timeoutMs: 10_000, everyMs: 20 };

/** The real store, counting the lookups that reach it. */
class Counted implements KeyLookup {
  lookups = 0;
  constructor(private readonly store: ApiKeyStore) {}
  findActiveKeyByHash(hash: string) {
    this.lookups++;
    return this.store.findActiveKeyByHash(hash);
  }
}

let gateway: KyselyMetadataStore;
let dashboard: KyselyMetadataStore;

beforeAll(async () => {
  gateway = createPostgresMetadataStore({ connectionString: DATABASE_URL, schema });
  dashboard = createPostgresMetadataStore({ connectionString: DATABASE_URL, schema });
  await gateway.migrate();
  await dashboard.migrate();
});

afterAll(async () => {
  await Promise.all([gateway.close(), dashboard.close()]);
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`drop schema if exists "${schema}" cascade`);
  await admin.end();
});

async function keyOf(store: KyselyMetadataStore) {
  const user = await store.createUser({ email: `${randomUUID()}@example.test`, plan: "free" });
  const hash = randomUUID();
  const key = await store.createKey({
    userId: user.id,
    name: "build server",
    type: "live",
    displayPrefix: "lk_live_abcd",
    hash,
  });
  return { user, key, hash };
}

/** A cache over the gateway's store, listening; stopped after `run`. */
async function withCache(
  run: (cache: KeyLookupCache, counted: Counted) => Promise<void>,
  now?: () => number,
): Promise<void> {
  const counted = new Counted(gateway);
  const cache = new KeyLookupCache(counted, now);
  const feed = gateway.watchKeyChanges(cache)!;
  try {
    expect(await pollUntil(() => cache.isListening, Boolean, WAIT)).toBe(true);
    await run(cache, counted);
  } finally {
    await feed.close();
  }
}

describe("KeyLookupCache over Postgres", () => {
  it("looks a key up once while it hears of changes, and never keeps an unknown key", async () => {
    await withCache(async (cache, counted) => {
      const { key, hash } = await keyOf(dashboard);
      for (let i = 0; i < 5; i++) expect((await cache.findActiveKeyByHash(hash))?.key.id).toBe(key.id);
      expect(counted.lookups).toBe(1);
      // An unknown key is asked for every time: created a moment later, it works at once.
      const later = randomUUID();
      expect(await cache.findActiveKeyByHash(later)).toBeNull();
      const { user } = await keyOf(dashboard);
      await dashboard.createKey({
        userId: user.id,
        name: "new",
        type: "live",
        displayPrefix: "x",
        hash: later,
      });
      expect(await cache.findActiveKeyByHash(later)).not.toBeNull();
    });
  });

  it("refuses a key revoked by another process once the database's notice arrives", async () => {
    await withCache(async (cache) => {
      const { hash } = await keyOf(dashboard);
      expect(await cache.findActiveKeyByHash(hash)).not.toBeNull();
      await dashboard.revokeKey({ hash });
      expect(
        await pollUntil(
          () => cache.findActiveKeyByHash(hash),
          (found) => found === null,
          WAIT,
        ),
      ).toBeNull();
    });
  });

  it("refuses a key revoked through its own process's store at once", async () => {
    await withCache(async (cache) => {
      const { key, hash } = await keyOf(gateway);
      expect(await cache.findActiveKeyByHash(hash)).not.toBeNull();
      await gateway.revokeKey({ id: key.id });
      expect(await cache.findActiveKeyByHash(hash)).toBeNull();
    });
  });

  it("sees an owner's new plan at once after the notice", async () => {
    await withCache(async (cache) => {
      const { user, hash } = await keyOf(dashboard);
      expect((await cache.findActiveKeyByHash(hash))?.user.plan).toBe("free");
      const admin = new pg.Client({ connectionString: DATABASE_URL });
      await admin.connect();
      await admin.query(`update "${schema}".users set plan = 'enterprise' where id = $1`, [user.id]);
      await admin.end();
      const planNow = async () => (await cache.findActiveKeyByHash(hash))?.user.plan;
      expect(await pollUntil(planNow, (plan) => plan === "enterprise", WAIT)).toBe("enterprise");
    });
  });

  it("keeps no lookup that a change overtook", async () => {
    const { key, hash } = await keyOf(dashboard);
    const counted = new Counted(gateway);
    // The lookup reads the row, then its answer is held back while the change is heard.
    let held: Promise<void> | undefined;
    const cache = new KeyLookupCache({
      findActiveKeyByHash: async (h) => {
        const found = await counted.findActiveKeyByHash(h);
        await held;
        return found;
      },
    });
    cache.live();
    let release!: () => void;
    held = new Promise((resolve) => (release = resolve));
    const first = cache.findActiveKeyByHash(hash);
    expect(
      await pollUntil(
        () => counted.lookups,
        (n) => n === 1,
        WAIT,
      ),
    ).toBe(1);
    cache.changed({ keyId: key.id });
    release();
    expect(await first).not.toBeNull();
    held = undefined;
    await cache.findActiveKeyByHash(hash);
    expect(counted.lookups).toBe(2);
  });

  it("looks every key up while not listening, and a kept one again after 30 s", async () => {
    let clock = 1_000_000;
    await withCache(
      async (cache, counted) => {
        const { hash } = await keyOf(dashboard);
        await cache.findActiveKeyByHash(hash);
        clock += 29_000;
        await cache.findActiveKeyByHash(hash);
        expect(counted.lookups).toBe(1);
        clock += 2_000;
        await cache.findActiveKeyByHash(hash);
        expect(counted.lookups).toBe(2);
        // Listening lost: every request looks its key up until it listens again.
        cache.lost();
        await cache.findActiveKeyByHash(hash);
        await cache.findActiveKeyByHash(hash);
        expect(counted.lookups).toBe(4);
      },
      () => clock,
    );
  });

  it("keeps nothing over SQLite, whose store cannot tell of the CLI's changes", async () => {
    const store = createSqliteMetadataStore(":memory:");
    await store.migrate();
    try {
      const counted = new Counted(store);
      const cache = new KeyLookupCache(counted);
      expect(store.watchKeyChanges(cache)).toBeNull();
      const { hash } = await keyOf(store);
      await cache.findActiveKeyByHash(hash);
      await cache.findActiveKeyByHash(hash);
      expect(counted.lookups).toBe(2);
    } finally {
      await store.close();
    }
  });
});
