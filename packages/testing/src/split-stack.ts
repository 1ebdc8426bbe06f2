import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { promisify } from "node:util";
import { CreateBucketCommand, ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import amqp from "amqplib";
import pg from "pg";
import { DEFAULT_EMBEDDER, meaningStageRuns, splitLayout } from "@locus/runtime";
import { spawnLocus, startLocus, tempDataDir, removeDataDir, type LocusProcess } from "./locus-process.ts";
import { startSigningS3Server, type SigningS3Server } from "./signing-s3-server.ts";

const run = promisify(execFile);

export const TEST_DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
export const TEST_AMQP_URL = process.env.AMQP_URL ?? "amqp://guest:guest@127.0.0.1:5672";
export const TEST_REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

export interface SplitStack extends LocusProcess {
  /** Every gateway's base URL (several with `gateways`), the first one being baseUrl. */
  gatewayUrls: string[];
  /** Each service's own URL (its /healthz), by the launcher's name for it. */
  serviceUrls: Record<string, string>;
  /** The current pid of a service, by the launcher's name for it (`gateway-2`, `extractor-pdf`…: splitLayout). */
  pidOf(service: string): number;
  /** kill -9 one service; the launcher starts it again after a second, as a supervisor would. */
  killService(service: string): void;
  s3: SigningS3Server;
  s3Bucket: string;
  /** What an S3 blob store needs to reach this run's bucket (for tests that plant or inspect blobs). */
  blobStoreOptions: {
    bucket: string;
    region: string;
    endpoint: string;
    forcePathStyle: true;
    accessKeyId: string;
    secretAccessKey: string;
  };
  /** Every object key in this run's bucket. */
  bucketKeys(): Promise<string[]>;
  /** Postgres schema and AMQP prefix of this run: nothing else on the machine is touched. */
  schema: string;
  amqpPrefix: string;
}

/**
 * The first port the kernel hands out to outgoing connections: a service's port must sit below,
 * or while it restarts after a crash an outgoing connection of any process may take its port
 * (seen: an extractor unable to listen again for a minute).
 */
function ephemeralPortStart(): number {
  try {
    return (
      Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]) || 32_768
    );
  } catch {
    return 32_768;
  }
}

/** A block of consecutive free ports on 127.0.0.1 (gateway, files, search, workers, ...). */
export async function freePortBlock(size: number): Promise<number> {
  const isFree = (port: number) =>
    new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once("error", () => resolve(false));
      server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
    });
  for (let attempt = 0; attempt < 50; attempt++) {
    const base =
      20_000 + Math.floor(Math.random() * (Math.min(50_000, ephemeralPortStart()) - 20_000 - size));
    const checks = await Promise.all(Array.from({ length: size }, (_, i) => isFree(base + i)));
    if (checks.every(Boolean)) return base;
  }
  throw new Error("no block of free ports found");
}

/** How long the other services may take to answer /healthz after the first gateway does. */
const HEALTH_WAIT_MS = 60_000;

/**
 * The settings that put a process on the machine's shared parts (RabbitMQ, Redis, Postgres and the
 * tests' S3 server), isolated by a schema, a queue prefix and a bucket: what every process of a
 * split deployment and its operator's CLI are given. Each adapter is named, not left to LOCUS_SHAPE,
 * so a test can take one out.
 */
export function sharedPartsEnv(parts: {
  schema: string;
  amqpPrefix: string;
  bucket: string;
  s3: Pick<SigningS3Server, "region" | "endpoint" | "accessKeyId" | "secretAccessKey">;
}) {
  const { schema, amqpPrefix, bucket, s3 } = parts;
  return {
    LOCUS_BUS: "rabbitmq",
    AMQP_URL: TEST_AMQP_URL,
    LOCUS_AMQP_PREFIX: amqpPrefix,
    LOCUS_RATE_LIMIT_STORE: "redis",
    REDIS_URL: TEST_REDIS_URL,
    LOCUS_METADATA_STORE: "postgres",
    LOCUS_SEARCH_INDEX: "postgres",
    DATABASE_URL: TEST_DATABASE_URL,
    LOCUS_DATABASE_SCHEMA: schema,
    LOCUS_BLOB_STORE: "s3",
    S3_BUCKET: bucket,
    S3_REGION: s3.region,
    S3_ENDPOINT: s3.endpoint,
    S3_FORCE_PATH_STYLE: "true",
    S3_ACCESS_KEY_ID: s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
  };
}

/** A schema, an AMQP prefix and a bucket on a signing S3 server of its own: one run's shared parts. */
async function isolatedSharedParts() {
  const id = randomBytes(4).toString("hex");
  const schema = `locus_t${id}`;
  const amqpPrefix = `t${id}.`;
  const s3 = await startSigningS3Server();
  const bucket = `locus-${id}`;
  const admin = new S3Client({
    region: s3.region,
    endpoint: s3.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
  });
  await admin.send(new CreateBucketCommand({ Bucket: bucket }));
  admin.destroy();
  return { schema, amqpPrefix, s3, bucket };
}

/**
 * Every target in one process (`pnpm start`'s LOCUS_TARGETS=all) but on the split shape's shared
 * parts (PostgreSQL, RabbitMQ, Redis, S3), isolated like a split stack: the baseline that tells what
 * the split shape's hops cost from what its adapters cost. Stopping it removes what it made.
 */
export async function startAllInOneOnSharedParts(
  options: { env?: Record<string, string> } = {},
): Promise<LocusProcess> {
  const parts = await isolatedSharedParts();
  const dataDir = tempDataDir("locus-shared-");
  const shared = sharedPartsEnv(parts);
  const cleanUpAll = () => cleanUp(parts.schema, parts.amqpPrefix, parts.s3, dataDir);
  let locus: LocusProcess;
  try {
    locus = await startLocus({ dataDir, env: { ...shared, ...options.env } });
  } catch (err) {
    await cleanUpAll();
    throw err;
  }
  return {
    ...locus,
    cliEnv: shared,
    stop: async () => {
      const code = await locus.stop();
      await cleanUpAll();
      return code;
    },
  };
}

/**
 * The split shape as the README starts it (`pnpm start:split`: one process per target), on the
 * machine's real Postgres, RabbitMQ and Redis and an S3-compatible server that checks signatures,
 * each run isolated by a Postgres schema, an AMQP name prefix and a bucket of its own.
 */
export async function startSplitStack(
  options: { env?: Record<string, string>; extractors?: number; gateways?: number } = {},
) {
  const { schema, amqpPrefix, s3, bucket } = await isolatedSharedParts();
  const extractors = options.extractors ?? 1;
  const gateways = options.gateways ?? 1;
  // The launcher starts the encoder where the meaning stage runs.
  const encodes = meaningStageRuns({
    ai: { embedder: options.env?.LOCUS_EMBEDDER ?? DEFAULT_EMBEDDER },
    adapters: { searchIndex: options.env?.LOCUS_SEARCH_INDEX ?? "postgres" },
  });
  // The launcher's layout: the ports it will use are free ones, each process on its own.
  const layoutOf = (basePort: number) =>
    splitLayout({ basePort, pdfExtractors: extractors, gateways, encoder: encodes });
  const port = await freePortBlock(layoutOf(0).length);
  const layout = layoutOf(port);
  const dataDir = tempDataDir("locus-split-");
  // What any process (the CLI included) needs to reach this stack's data and messages: an
  // operator's CLI gets the deployment's settings.
  const shared = sharedPartsEnv({ schema, amqpPrefix, bucket, s3 });

  const env = {
    ...shared,
    HOST: "127.0.0.1",
    PORT: String(port),
    LOCUS_DATA_DIR: dataDir,
    LOCUS_LOG_LEVEL: "info",
    LOCUS_SPLIT_EXTRACTORS: String(extractors),
    LOCUS_SPLIT_GATEWAYS: String(gateways),
    ...options.env,
  };
  let locus: LocusProcess;
  try {
    locus = await spawnLocus({
      script: "apps/locus/src/split.ts",
      env,
      dataDir,
      cliEnv: shared,
      // The first gateway, on the base port; the others are awaited below.
      ready: new RegExp(
        `"service":"gateway[^"]*".*"url":"(http://127\\.0\\.0\\.1:${port})".*"msg":"listening"`,
      ),
      // A hang detector, not a speed check: a dozen processes load their sources at once on two
      // cores (about 5 s of CPU each, more for the models), beside whatever else the run starts.
      timeoutMs: 150_000,
    });
  } catch (err) {
    await cleanUp(schema, amqpPrefix, s3, dataDir);
    throw err;
  }
  const stop = async () => {
    const code = await locus.stop();
    await cleanUp(schema, amqpPrefix, s3, dataDir);
    return code;
  };
  const kill = async () => {
    // The services are the launcher's children, not in a process group of ours: kill each.
    const pids = new Set<number>();
    for (const line of locus.logs) {
      const m = /^locus-split: \S+ started with pid (\d+)$/.exec(line);
      if (m?.[1]) pids.add(Number(m[1]));
    }
    await locus.kill();
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    await cleanUp(schema, amqpPrefix, s3, dataDir);
  };
  const pidOf = (service: string): number => {
    // The launcher logs "<name> started with pid <pid>" each time it (re)starts a service.
    for (const line of [...locus.logs].reverse()) {
      const m = /^locus-split: (\S+) started with pid (\d+)$/.exec(line);
      if (m?.[1] === service) return Number(m[2]);
    }
    throw new Error(`no pid logged for ${service}`);
  };
  const killService = (service: string) => process.kill(pidOf(service), "SIGKILL");
  const bucketKeys = async () => {
    const lister = new S3Client({
      region: s3.region,
      endpoint: s3.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    });
    const keys: string[] = [];
    try {
      let token: string | undefined;
      do {
        const page = await lister.send(
          new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }),
        );
        keys.push(...(page.Contents ?? []).map((o) => o.Key ?? ""));
        token = page.NextContinuationToken;
      } while (token);
    } finally {
      lister.destroy();
    }
    return keys;
  };
  const url = (p: number) => `http://127.0.0.1:${p}`;
  const serviceUrls: Record<string, string> = Object.fromEntries(layout.map((p) => [p.name, url(p.port)]));
  const gatewayUrls = layout.filter((p) => p.target === "gateway").map((p) => url(p.port));
  // Every other process answers a moment after the first gateway: wait for all, so a test's
  // first request never meets a service still starting.
  const others = layout.filter((p) => p.port !== port).map((p) => url(p.port));
  // A service still silent at the deadline fails the start: a test run against a stack missing a
  // service would fail later, further from the cause.
  const deadline = Date.now() + HEALTH_WAIT_MS;
  for (const url of others) {
    for (;;) {
      const up = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5_000) }).then(
        (r) => r.ok,
        () => false,
      );
      if (up) break;
      if (Date.now() > deadline) {
        const name = Object.entries(serviceUrls).find(([, u]) => u === url)?.[0] ?? url;
        await kill();
        throw new Error(
          `the split stack's ${name} (${url}) did not answer /healthz within ${HEALTH_WAIT_MS / 1000} s of the first gateway`,
        );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    ...locus,
    stop,
    kill,
    s3,
    s3Bucket: bucket,
    bucketKeys,
    blobStoreOptions: {
      bucket,
      region: s3.region,
      endpoint: s3.endpoint,
      forcePathStyle: true,
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
    },
    schema,
    amqpPrefix,
    gatewayUrls,
    serviceUrls,
    pidOf,
    killService,
  } satisfies SplitStack;
}

/**
 * Stops or starts the machine's PostgreSQL cluster (Debian's pg_ctlcluster; a fast stop, as a
 * crash or a failover would look to clients). For the fault suites, which run alone.
 */
export async function postgresCluster(action: "stop" | "start"): Promise<void> {
  const version = readdirSync("/etc/postgresql")[0] ?? "15";
  await run("pg_ctlcluster", [
    "--skip-systemctl-redirect",
    version,
    "main",
    action,
    ...(action === "stop" ? ["-m", "fast"] : []),
  ]);
}

/**
 * Stops or starts the machine's Redis (as .ci/services.sh starts it: nothing kept on disk), for
 * the fault suites. A stop is a shutdown without saving, as a crash would look to clients.
 */
export async function redisServer(action: "stop" | "start"): Promise<void> {
  const url = new URL(TEST_REDIS_URL);
  const port = url.port || "6379";
  if (action === "stop") {
    await run("redis-cli", ["-h", url.hostname, "-p", port, "shutdown", "nosave"]).catch(() => undefined);
    return;
  }
  await run("redis-server", [
    "--daemonize",
    "yes",
    "--bind",
    "127.0.0.1",
    "-::1",
    "--port",
    port,
    "--save",
    "",
    "--appendonly",
    "no",
    "--dir",
    "/var/lib/redis",
    "--logfile",
    "/var/log/redis/ci.log",
  ]);
  for (let i = 0; i < 100; i++) {
    const pong = await run("redis-cli", ["-h", url.hostname, "-p", port, "ping"]).then(
      (r) => r.stdout.trim() === "PONG",
      () => false,
    );
    if (pong) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("Redis did not come back within 10 s");
}

/** Drops a schema a run made in the test database, with everything in it. */
export async function dropTestSchema(schema: string): Promise<void> {
  const db = new pg.Client({ connectionString: TEST_DATABASE_URL });
  try {
    await db.connect();
    await db.query(`DROP SCHEMA IF EXISTS "${schema.replaceAll('"', '""')}" CASCADE`);
  } finally {
    await db.end();
  }
}

/** Deletes the queues and exchanges whose names start with `prefix` (a test's own) from the test broker. */
export async function deleteBrokerTopology(prefix: string): Promise<void> {
  // The broker's own tool lists names; amqplib deletes them. For a broker in a container (see
  // scripts/test-services.mjs) the tool runs inside it.
  const [ctl = "rabbitmqctl", ...ctlArgs] = (process.env.LOCUS_TEST_RABBITMQCTL ?? "rabbitmqctl").split(" ");
  const list = async (what: "queues" | "exchanges") =>
    (await run(ctl, [...ctlArgs, `list_${what}`, "-q", "--no-table-headers", "name"])).stdout
      .split("\n")
      .map((l) => l.trim())
      .filter((n) => n.startsWith(prefix));
  const connection = await amqp.connect(TEST_AMQP_URL);
  try {
    const channel = await connection.createChannel();
    for (const queue of await list("queues")) await channel.deleteQueue(queue);
    for (const exchange of await list("exchanges")) await channel.deleteExchange(exchange);
    await channel.close();
  } finally {
    await connection.close();
  }
}

/** Drops what a run made: its Postgres schema, its queues and exchanges, its S3 server. */
async function cleanUp(schema: string, prefix: string, s3: SigningS3Server, dataDir: string): Promise<void> {
  await dropTestSchema(schema);
  await deleteBrokerTopology(prefix);
  await s3.stop();
  removeDataDir(dataDir);
}
