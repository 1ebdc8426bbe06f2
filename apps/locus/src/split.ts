import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { DEFAULT_EMBEDDER, meaningStageRuns } from "@locus/runtime";

/**
 * `pnpm start:split`: every target as its own OS process on this machine, against the shared
 * infrastructure named in the environment (DATABASE_URL, AMQP_URL, S3_*, REDIS_URL): the split
 * shape for local use and tests. A process that dies is started again, as a supervisor would.
 *
 * Ports: the gateway on PORT (default 8080), then files, search, indexer and one per extractor
 * counting up (the PDF extractors, then the image, audio and video extractors), then further
 * gateways, then webhooks, then the document extractor, then the encoder where the meaning stage
 * runs (LOCUS_EMBEDDER=encoder): each after the others, so that the ports before it stay where
 * they were before it came.
 * LOCUS_SPLIT_EXTRACTORS (default 1) sets how many extractor-pdf processes run,
 * LOCUS_SPLIT_GATEWAYS (default 1) how many gateways (replicas sharing Redis and Postgres).
 */
const MAIN = fileURLToPath(new URL("./main.ts", import.meta.url));
const env = process.env;
const basePort = Number(env.PORT ?? 8080);
const host = env.HOST ?? "127.0.0.1";
const extractors = Math.max(1, Number(env.LOCUS_SPLIT_EXTRACTORS ?? 1));
const gateways = Math.max(1, Number(env.LOCUS_SPLIT_GATEWAYS ?? 1));
/** Extractor processes: the PDF ones, and one each for images, audio and video. */
const workers = extractors + 3;
const internalHost = host === "0.0.0.0" ? "127.0.0.1" : host;

// Shared settings: the split adapters unless the environment chose otherwise, and one secret for
// the calls between services (made for this run when not given).
const shared: NodeJS.ProcessEnv = {
  ...env,
  HOST: host,
  LOCUS_BUS: env.LOCUS_BUS ?? "rabbitmq",
  LOCUS_METADATA_STORE: env.LOCUS_METADATA_STORE ?? "postgres",
  LOCUS_SEARCH_INDEX: env.LOCUS_SEARCH_INDEX ?? "postgres",
  LOCUS_BLOB_STORE: env.LOCUS_BLOB_STORE ?? "s3",
  LOCUS_RATE_LIMIT_STORE: env.LOCUS_RATE_LIMIT_STORE ?? (env.REDIS_URL ? "redis" : "memory"),
  LOCUS_INTERNAL_SECRET: env.LOCUS_INTERNAL_SECRET ?? randomBytes(32).toString("base64url"),
};

/** After every gateway: the layout before it stays as it was. */
const webhooksPort = basePort + 4 + workers + gateways - 1;
/** After webhooks, for the same reason. */
const documentExtractorPort = webhooksPort + 1;

interface Service {
  name: string;
  target: string;
  port: number;
  env?: NodeJS.ProcessEnv;
}

const services: Service[] = [
  { name: "files", target: "files", port: basePort + 1 },
  { name: "search", target: "search", port: basePort + 2 },
  { name: "indexer", target: "indexer", port: basePort + 3 },
  ...Array.from({ length: extractors }, (_, i) => ({
    name: extractors === 1 ? "extractor-pdf" : `extractor-pdf-${i + 1}`,
    target: "extractor-pdf",
    port: basePort + 4 + i,
  })),
  { name: "extractor-image", target: "extractor-image", port: basePort + 4 + extractors },
  { name: "extractor-audio", target: "extractor-audio", port: basePort + 5 + extractors },
  { name: "extractor-video", target: "extractor-video", port: basePort + 6 + extractors },
  ...Array.from({ length: gateways }, (_, i) => ({
    name: gateways === 1 ? "gateway" : `gateway-${i + 1}`,
    target: "gateway",
    // The first gateway on PORT; more after the workers.
    port: i === 0 ? basePort : basePort + 4 + workers + i - 1,
    env: {
      LOCUS_FILES_URL: env.LOCUS_FILES_URL ?? `http://${internalHost}:${basePort + 1}`,
      LOCUS_SEARCH_URL: env.LOCUS_SEARCH_URL ?? `http://${internalHost}:${basePort + 2}`,
      LOCUS_WEBHOOKS_URL: env.LOCUS_WEBHOOKS_URL ?? `http://${internalHost}:${webhooksPort}`,
    },
  })),
  { name: "webhooks", target: "webhooks", port: webhooksPort },
  { name: "extractor-document", target: "extractor-document", port: documentExtractorPort },
  ...(meaningStageRuns({
    ai: { embedder: env.LOCUS_EMBEDDER ?? DEFAULT_EMBEDDER },
    adapters: { searchIndex: shared.LOCUS_SEARCH_INDEX ?? "postgres" },
  })
    ? [{ name: "encoder", target: "encoder", port: documentExtractorPort + 1 }]
    : []),
];

const children = new Map<string, ChildProcess>();
let stopping = false;

function start(service: Service): void {
  const child = spawn(process.execPath, ["--import", "tsx", MAIN], {
    env: {
      ...shared,
      ...service.env,
      LOCUS_TARGETS: service.target,
      LOCUS_SERVICE_NAME: service.name,
      PORT: String(service.port),
    },
    stdio: ["ignore", "inherit", "inherit"],
  });
  children.set(service.name, child);
  // For operators and tests (fault injection): which process is which.
  process.stderr.write(`locus-split: ${service.name} started with pid ${child.pid ?? "?"}\n`);
  child.on("exit", (code, signal) => {
    children.delete(service.name);
    if (stopping) return;
    // Exit code 2 is a configuration error: starting again would only fail again.
    if (code === 2) {
      process.stderr.write(`locus-split: ${service.name} refused its configuration; stopping everything\n`);
      void stopAll(2);
      return;
    }
    process.stderr.write(
      `locus-split: ${service.name} exited (${signal ?? code}); starting it again in 1 s\n`,
    );
    setTimeout(() => {
      if (!stopping) start(service);
    }, 1000);
  });
}

async function stopAll(code: number): Promise<void> {
  stopping = true;
  const exits = [...children.values()].map(
    (child) =>
      new Promise<void>((resolve) =>
        child.exitCode !== null ? resolve() : child.once("exit", () => resolve()),
      ),
  );
  for (const child of children.values()) child.kill("SIGTERM");
  await Promise.all(exits);
  process.exit(code);
}

process.on("SIGINT", () => void stopAll(0));
process.on("SIGTERM", () => void stopAll(0));
process.stderr.write(`locus-split: starting ${services.map((s) => `${s.name} on :${s.port}`).join(", ")}\n`);
for (const service of services) start(service);
