import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { DEFAULT_EMBEDDER, meaningStageRuns, splitLayout, type SplitProcess } from "@locus/runtime";

/**
 * `pnpm start:split`: every target as its own OS process on this machine, against the shared
 * infrastructure named in the environment (DATABASE_URL, AMQP_URL, S3_*, REDIS_URL): the split
 * shape for local use and tests. A process that dies is started again, as a supervisor would.
 *
 * Ports: the gateway on PORT (default 8080), then one per process counting up, in the order of
 * LOCUS_TARGETS's list (splitLayout); the encoder runs where the meaning stage does
 * (LOCUS_EMBEDDER=encoder).
 * LOCUS_SPLIT_EXTRACTORS (default 1) sets how many extractor-pdf processes run,
 * LOCUS_SPLIT_GATEWAYS (default 1) how many gateways (replicas sharing Redis and Postgres).
 */
// Each target runs as this supervisor does: built (`pnpm start:split` runs dist/split.js), main.js
// beside it with plain node; from the sources (the tests), main.ts through tsx.
const fromBundle = import.meta.url.endsWith(".js");
const MAIN = fileURLToPath(new URL(fromBundle ? "./main.js" : "./main.ts", import.meta.url));
const MAIN_ARGS = fromBundle ? [MAIN] : ["--import", "tsx", MAIN];
const env = process.env;
const basePort = Number(env.PORT ?? 8080);
const host = env.HOST ?? "127.0.0.1";
const extractors = Math.max(1, Number(env.LOCUS_SPLIT_EXTRACTORS ?? 1));
const gateways = Math.max(1, Number(env.LOCUS_SPLIT_GATEWAYS ?? 1));
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

interface Service extends SplitProcess {
  env?: NodeJS.ProcessEnv;
}

const layout = splitLayout({
  basePort,
  pdfExtractors: extractors,
  gateways,
  encoder: meaningStageRuns({
    ai: { embedder: env.LOCUS_EMBEDDER ?? DEFAULT_EMBEDDER },
    adapters: { searchIndex: shared.LOCUS_SEARCH_INDEX ?? "postgres" },
  }),
});
const internalUrl = (target: SplitProcess["target"]): string => {
  const process = layout.find((p) => p.target === target);
  if (!process) throw new Error(`the split layout has no ${target}`);
  return `http://${internalHost}:${process.port}`;
};
// Each gateway reaches the services it calls at their place in the layout.
const gatewayEnv: NodeJS.ProcessEnv = {
  LOCUS_FILES_URL: env.LOCUS_FILES_URL ?? internalUrl("files"),
  LOCUS_SEARCH_URL: env.LOCUS_SEARCH_URL ?? internalUrl("search"),
  LOCUS_WEBHOOKS_URL: env.LOCUS_WEBHOOKS_URL ?? internalUrl("webhooks"),
};
const services: Service[] = layout.map((p) => (p.target === "gateway" ? { ...p, env: gatewayEnv } : p));

const children = new Map<string, ChildProcess>();
let stopping = false;

function start(service: Service): void {
  const child = spawn(process.execPath, MAIN_ARGS, {
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
