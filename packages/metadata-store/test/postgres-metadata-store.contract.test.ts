import { randomUUID } from "node:crypto";
import net from "node:net";
import { performance } from "node:perf_hooks";
import { FileStatus } from "@locus/contracts";
import pg from "pg";
import { createPostgresMetadataStore } from "../src/postgres-metadata-store.ts";
import type { FileRecord, MetadataStore } from "../src/metadata-store.ts";
import { metadataStoreContract } from "./metadata-store.contract.ts";

const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
/** Kysely's Postgres migration lock (kysely/dist/esm/dialect/postgres/postgres-adapter.js). */
const KYSELY_MIGRATION_LOCK_ID = "3853314791062309107";

let admin: pg.Pool | undefined;

/** A pool for the tests' own look at the database, behind the stores' backs. */
function adminPool(): pg.Pool {
  if (!admin) throw new Error("The admin pool is made in beforeAll");
  return admin;
}

// Postgres is required, not optional: CI starts it, so a missing server is a broken build, and a
// skipped suite would hide that the split-mode store was never tested.
beforeAll(async () => {
  admin = new pg.Pool({ connectionString: DATABASE_URL, max: 3, connectionTimeoutMillis: 5_000 });
  admin.on("error", () => {});
  try {
    await admin.query("select 1");
  } catch (error) {
    const url = new URL(DATABASE_URL);
    if (url.password) url.password = "***";
    throw new Error(
      `PostgreSQL must be running for the Postgres metadata store tests, at ${url.toString()} ` +
        `(CI starts it; set DATABASE_URL to use another server). Connecting failed: ${String(error)}`,
    );
  }
});

afterAll(async () => {
  await admin?.end();
});

const freshSchema = () => `locus_test_${randomUUID().replaceAll("-", "")}`;

async function dropSchema(schema: string): Promise<void> {
  await adminPool().query(`drop schema if exists "${schema}" cascade`);
}

async function tablesIn(schema: string): Promise<string[]> {
  const { rows } = await adminPool().query<{ table_name: string }>(
    "select table_name from information_schema.tables where table_schema = $1 order by table_name",
    [schema],
  );
  return rows.map((r) => r.table_name);
}

const elapsedSince = (start: number) => performance.now() - start;
// A busy 2-core CI can hold a process up for seconds: time bounds are the designed time plus this,
// generous enough not to flake and still far below what a missing timeout would cost (the test's
// own time-out, or for ever).
const SLACK_MS = 10_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Settles to "pending" if the promise has not settled within `ms`. */
const stateAfter = (promise: Promise<unknown>, ms: number) =>
  Promise.race([
    promise.then(
      () => "resolved",
      () => "rejected",
    ),
    new Promise((resolve) => setTimeout(() => resolve("pending"), ms)),
  ]);

const fileFor = (userId: string): FileRecord => {
  const id = randomUUID();
  return {
    id,
    userId,
    originalName: "a.pdf",
    fileType: "pdf",
    mimeType: "application/pdf",
    sizeBytes: 10,
    blobKey: `files/${userId}/${id}`,
    status: "pending",
    error: null,
    pageCount: null,
    durationS: null,
    passageCount: null,
    progress: null,
    metadata: {},
    createdAt: "2025-01-01T00:00:00.000Z",
    updatedAt: "2025-01-01T00:00:00.000Z",
  };
};

/**
 * A TCP relay to the real server that can cut every connection (the server went down) or freeze
 * them, dropping bytes both ways (a server that hangs or a network that drops packets silently).
 * Only ever listens on 127.0.0.1.
 */
class FaultyRelay {
  private mode: "open" | "cut" | "frozen" = "open";
  private readonly sockets = new Set<net.Socket>();
  /** Connections opened through the relay so far. */
  connections = 0;
  private readonly server: net.Server;

  private constructor(private readonly target: { host: string; port: number }) {
    this.server = net.createServer((client) => this.relay(client));
  }

  static async start(): Promise<FaultyRelay> {
    const url = new URL(DATABASE_URL);
    const relay = new FaultyRelay({ host: url.hostname, port: Number(url.port || 5432) });
    await new Promise<void>((resolve) => relay.server.listen(0, "127.0.0.1", resolve));
    return relay;
  }

  /** DATABASE_URL with the relay in place of the server. */
  get url(): string {
    const url = new URL(DATABASE_URL);
    url.hostname = "127.0.0.1";
    url.port = String((this.server.address() as net.AddressInfo).port);
    return url.toString();
  }

  cut(): void {
    this.mode = "cut";
    for (const socket of this.sockets) socket.destroy();
  }

  freeze(): void {
    this.mode = "frozen";
  }

  heal(): void {
    this.mode = "open";
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private relay(client: net.Socket): void {
    if (this.mode === "cut") {
      client.destroy();
      return;
    }
    this.connections += 1;
    const upstream = net.connect(this.target.port, this.target.host);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on("error", () => {});
      socket.on("close", () => this.sockets.delete(socket));
    }
    client.on("data", (chunk) => {
      if (this.mode === "open") upstream.write(chunk);
    });
    upstream.on("data", (chunk) => {
      if (this.mode === "open") client.write(chunk);
    });
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  }
}

// Each test in a fresh schema of its own, created by the suite's migrate() and dropped after.
metadataStoreContract("Postgres", () => {
  const schema = freshSchema();
  const store = createPostgresMetadataStore({ connectionString: DATABASE_URL, schema });
  return Promise.resolve({
    store,
    async cleanup() {
      await store.close();
      await dropSchema(schema);
    },
  });
});

describe("Postgres metadata store: two stores (two pools) on one schema", () => {
  let schema: string;
  let a: MetadataStore;
  let b: MetadataStore;

  beforeEach(async () => {
    schema = freshSchema();
    a = createPostgresMetadataStore({ connectionString: DATABASE_URL, schema, poolSize: 3 });
    b = createPostgresMetadataStore({ connectionString: DATABASE_URL, schema, poolSize: 3 });
    await a.migrate();
    await b.migrate();
  });

  afterEach(async () => {
    await a.close();
    await b.close();
    await dropSchema(schema);
  });

  it("each sees the other's users, keys, revocations and key use", async () => {
    const user = await a.createUser({ email: "op@example.test", plan: "pro" });
    expect(await b.findUserByEmail("op@example.test")).toEqual(user);

    const key = await b.createKey({
      userId: user.id,
      name: "from b",
      type: "live",
      displayPrefix: "lk_live_b001",
      hash: "b-hash",
    });
    expect(await a.findActiveKeyByHash("b-hash")).toEqual({ key, user });

    await a.touchKey(key.id, "2025-07-01T00:00:00.000Z");
    expect((await b.listKeys(user.id))[0]?.lastUsedAt).toBe("2025-07-01T00:00:00.000Z");

    expect(await b.revokeKey({ hash: "b-hash" })).not.toBeNull();
    expect(await a.findActiveKeyByHash("b-hash")).toBeNull();
    expect(await a.revokeKey({ id: key.id })).toBeNull();
  });

  it("each sees the other's file records, updates and deletions", async () => {
    const user = await a.createUser({ email: "files@example.test", plan: "free" });
    const file = fileFor(user.id);
    await a.createFile(file);
    expect(await b.getFile(user.id, file.id)).toEqual(file);

    const updated = await b.updateFile(
      file.id,
      {
        status: "ready",
        pageCount: 1,
        durationS: null,
        passageCount: 2,
      },
      { status: FileStatus.options },
    );
    expect(await a.getFileById(file.id)).toEqual(updated);
    expect(await a.listUnfinishedFiles({ limit: 10 })).toEqual([]);

    expect(await a.deleteFile(user.id, file.id)).toEqual(updated);
    expect(await b.getFileById(file.id)).toBeNull();
  });

  it("quota reservations through both stores never exceed the quota together", async () => {
    const user = await a.createUser({ email: "quota@example.test", plan: "free" });
    const month = "2025-08";
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? a : b).reserveUpload(user.id, month, 11)),
    );
    expect(results.filter(Boolean)).toHaveLength(11);
    expect(await a.uploadsThisMonth(user.id, month)).toBe(11);
    expect(await b.uploadsThisMonth(user.id, month)).toBe(11);
  });
});

describe("Postgres metadata store: schemas and migrations", () => {
  const schemas: string[] = [];
  const stores: MetadataStore[] = [];

  const storeIn = (schema: string, options: { statementTimeoutMillis?: number; url?: string } = {}) => {
    if (!schemas.includes(schema)) schemas.push(schema);
    const store = createPostgresMetadataStore({
      connectionString: options.url ?? DATABASE_URL,
      schema,
      statementTimeoutMillis: options.statementTimeoutMillis,
    });
    stores.push(store);
    return store;
  };

  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    for (const schema of schemas.splice(0)) await dropSchema(schema);
  });

  it("migrate() from three processes at once on a fresh schema: each succeeds, each migration runs once", async () => {
    const schema = freshSchema();
    const [first, second, third] = [storeIn(schema), storeIn(schema), storeIn(schema)];
    await Promise.all([first.migrate(), second.migrate(), third.migrate()]);

    expect(await tablesIn(schema)).toEqual([
      "api_keys",
      "daily_usage",
      "events",
      "file_metadata_terms",
      "files",
      "kysely_migration",
      "kysely_migration_lock",
      "outbox",
      "sessions",
      "usage",
      "users",
      "webhook_attempts",
      "webhook_deliveries",
      "webhook_endpoints",
    ]);
    const { rows } = await adminPool().query<{ name: string }>(
      `select name from "${schema}".kysely_migration`,
    );
    expect(rows.map((r) => r.name)).toEqual([
      "0001_initial",
      "0002_file_duration",
      "0003_dashboard_accounts",
      "0004_file_requeues",
      "0005_file_metadata",
      "0006_webhooks",
      "0007_daily_usage",
      "0008_outbox",
      "0009_ai_vectors",
      "0010_key_change_notices",
      "0011_event_log",
      "0012_webhook_secret_overlap",
    ]);

    const user = await first.createUser({ email: "m@example.test", plan: "free" });
    expect(await third.findUserById(user.id)).toEqual(user);
  });

  it("a migrate() that starts while another holds the migration lock waits for it, past the statement timeout", async () => {
    const schema = freshSchema();
    const store = storeIn(schema, { statementTimeoutMillis: 200 });
    const holder = await adminPool().connect();
    let migrating: Promise<void> | undefined;
    try {
      await holder.query(`select pg_advisory_lock(${KYSELY_MIGRATION_LOCK_ID})`);
      migrating = store.migrate();
      // Held well past the store's statement timeout: migrations must not be cut off by it.
      expect(await stateAfter(migrating, 1_000)).toBe("pending");
      expect(await tablesIn(schema)).not.toContain("users");
    } finally {
      await holder.query(`select pg_advisory_unlock(${KYSELY_MIGRATION_LOCK_ID})`);
      holder.release();
    }
    await expect(migrating).resolves.toBeUndefined();
    expect(await tablesIn(schema)).toContain("users");
  });

  it("stores in different schemas of one database do not see each other's data", async () => {
    const one = storeIn(freshSchema());
    const two = storeIn(freshSchema());
    await one.migrate();
    await two.migrate();
    const user = await one.createUser({ email: "same@example.test", plan: "free" });
    expect(await two.findUserByEmail("same@example.test")).toBeNull();
    // The same email is free in the other deployment.
    await expect(two.createUser({ email: "same@example.test", plan: "pro" })).resolves.toMatchObject({
      plan: "pro",
    });
    expect(await one.findUserById(user.id)).toEqual(user);
    expect(await tablesIn(schemas[0]!)).toContain("users");
    expect(await tablesIn(schemas[1]!)).toContain("users");
  });

  it("keeps its schema when the connection string carries startup options of its own", async () => {
    const schema = freshSchema();
    const url = new URL(DATABASE_URL);
    url.searchParams.set("options", "-c lock_timeout=5000");
    const store = storeIn(schema, { url: url.toString() });
    await store.migrate();
    await store.createUser({ email: "opts@example.test", plan: "free" });
    const { rows } = await adminPool().query<{ n: number }>(
      `select count(*)::int as n from "${schema}".users`,
    );
    expect(rows[0]?.n).toBe(1);
  });

  it("refuses a schema name it cannot put into search_path unquoted", () => {
    expect(() => createPostgresMetadataStore({ connectionString: DATABASE_URL, schema: "Bad-Name" })).toThrow(
      /schema name/,
    );
  });

  it("cancels a statement after statementTimeoutMillis, and the store stays usable", async () => {
    const schema = freshSchema();
    const store = storeIn(schema, { statementTimeoutMillis: 300 });
    await store.migrate();
    const user = await store.createUser({ email: "slow@example.test", plan: "free" });

    const locker = await adminPool().connect();
    try {
      await locker.query("begin");
      await locker.query(`lock table "${schema}".users in access exclusive mode`);
      const start = performance.now();
      await expect(store.findUserById(user.id)).rejects.toHaveProperty(
        "message",
        expect.stringMatching(/statement timeout/),
      );
      expect(elapsedSince(start)).toBeLessThan(300 + SLACK_MS);
    } finally {
      await locker.query("rollback");
      locker.release();
    }
    expect(await store.findUserById(user.id)).toEqual(user);
  });

  it("reads int8 as numbers on its own pool without changing pg's global parser", async () => {
    const store = storeIn(freshSchema());
    await store.migrate();
    const user = await store.createUser({ email: "big@example.test", plan: "free" });
    const file = { ...fileFor(user.id), sizeBytes: 9_007_199_254_740_991 };
    await store.createFile(file);
    expect(await store.getFileById(file.id)).toEqual(file);

    const { rows } = await adminPool().query<{ n: unknown }>("select 5000000000::int8 as n");
    expect(rows[0]?.n).toBe("5000000000");
  });
});

describe("Postgres metadata store: when Postgres is unreachable", () => {
  it("check() rejects within 2 s for a server that refuses connections, and queries reject", async () => {
    // Port 1 on this machine: nothing listens there, so the connection is refused at once.
    const store = createPostgresMetadataStore({
      connectionString: "postgres://postgres@127.0.0.1:1/test",
      schema: freshSchema(),
    });
    try {
      const start = performance.now();
      await expect(store.check()).rejects.toHaveProperty("message");
      expect(elapsedSince(start)).toBeLessThan(2_000 + SLACK_MS);
      await expect(store.findUserById(randomUUID())).rejects.toHaveProperty("message");
      await expect(store.migrate()).rejects.toHaveProperty("message");
    } finally {
      await store.close();
    }
  });

  describe("through a relay that can cut or freeze the connection", () => {
    let relay: FaultyRelay;
    let schema: string;
    let store: MetadataStore | undefined;

    beforeEach(async () => {
      relay = await FaultyRelay.start();
      schema = freshSchema();
    });

    afterEach(async () => {
      relay.heal();
      await store?.close();
      store = undefined;
      await relay.close();
      await dropSchema(schema);
    });

    it("check() rejects within about 2 s for a server that accepts connections but never answers", async () => {
      relay.freeze();
      store = createPostgresMetadataStore({ connectionString: relay.url, schema });
      const start = performance.now();
      await expect(store.check()).rejects.toHaveProperty("message");
      // It waited for its deadline (a lower bound a slow machine cannot break), and gave up then.
      expect(elapsedSince(start)).toBeGreaterThan(1_500);
      expect(elapsedSince(start)).toBeLessThan(2_000 + SLACK_MS);
    });

    it("check() rejects within about 2 s when a pooled connection stops getting answers", async () => {
      // A short statement timeout so the abandoned probe's connection is given up soon after.
      store = createPostgresMetadataStore({
        connectionString: relay.url,
        schema,
        statementTimeoutMillis: 500,
      });
      await store.migrate();
      await store.check();
      relay.freeze();
      const start = performance.now();
      await expect(store.check()).rejects.toHaveProperty("message", expect.stringMatching(/did not answer/));
      expect(elapsedSince(start)).toBeLessThan(2_000 + SLACK_MS);
    });

    it("queries reject while the server is gone, the process survives, and the store recovers", async () => {
      const connectionErrors: Error[] = [];
      store = createPostgresMetadataStore({
        connectionString: relay.url,
        schema,
        onConnectionError: (error) => connectionErrors.push(error),
      });
      await store.migrate();
      const user = await store.createUser({ email: "down@example.test", plan: "free" });

      relay.cut();
      // The idle pooled connection breaks while nobody uses it: reported, not thrown (an unheard
      // 'error' event would end this process).
      // A generous deadline: on a busy CI the broken connection may take seconds to be reported.
      for (const deadline = Date.now() + 10_000; connectionErrors.length === 0 && Date.now() < deadline;)
        await sleep(20);
      expect(connectionErrors.length).toBeGreaterThan(0);

      const start = performance.now();
      await expect(store.findUserById(user.id)).rejects.toHaveProperty("message");
      await expect(store.reserveUpload(user.id, "2025-01", 5)).rejects.toHaveProperty("message");
      await expect(store.check()).rejects.toHaveProperty("message");
      expect(elapsedSince(start)).toBeLessThan(2_000 + SLACK_MS);

      relay.heal();
      await expect(store.check()).resolves.toBeUndefined();
      expect(await store.findUserById(user.id)).toEqual(user);
    });

    it("a query to a server that stops answering rejects, and its connection is not handed out again", async () => {
      // One connection: without the guard, the next query would queue behind the lost answer.
      store = createPostgresMetadataStore({
        connectionString: relay.url,
        schema,
        poolSize: 1,
        statementTimeoutMillis: 200,
      });
      await store.migrate();
      const user = await store.createUser({ email: "frozen@example.test", plan: "free" });

      relay.freeze();
      const start = performance.now();
      await expect(store.findUserById(user.id)).rejects.toHaveProperty(
        "message",
        expect.stringMatching(/timeout/),
      );
      // The statement timeout plus the client's margin for the server's own cancel (5 s).
      expect(elapsedSince(start)).toBeLessThan(5_200 + SLACK_MS);

      relay.heal();
      const again = performance.now();
      const connections = relay.connections;
      expect(await store.findUserById(user.id)).toEqual(user);
      // On a new connection, not queued behind the lost answer on the old one (which would never
      // come): counted, and timed with room for a busy CI.
      expect(relay.connections).toBe(connections + 1);
      expect(elapsedSince(again)).toBeLessThan(2_000 + SLACK_MS);
    });
  });
});
