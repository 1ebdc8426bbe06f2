import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  ConfigError,
  loadConfig,
  meaningStageRuns,
  scrapeConfig,
  splitLayout,
  type LocusConfig,
  type SplitProcess,
} from "@locus/runtime";

/**
 * `pnpm start:split`: every target as its own OS process on this machine, against the shared
 * infrastructure named in the environment (DATABASE_URL, AMQP_URL, S3_*, REDIS_URL): the split
 * shape for local use and tests. A process that dies is started again, as a supervisor would.
 * Every process gets LOCUS_SHAPE=split, so the adapters default to the shared ones (config.ts)
 * and a missing connection setting stops the launcher before anything starts.
 *
 * Ports: the gateway on PORT (default 8080), then one per process counting up, in the order of
 * LOCUS_TARGETS's list (splitLayout); the encoder runs where the meaning stage does
 * (LOCUS_EMBEDDER=encoder). With LOCUS_METRICS_PORT, each process also serves its metrics alone on
 * a port of its own, counting up from that one in the same order, and the Prometheus scrape config
 * they imply is written to <LOCUS_DATA_DIR>/prometheus-scrape.yml.
 * LOCUS_SPLIT_EXTRACTORS (default 1) sets how many extractor-pdf processes run,
 * LOCUS_SPLIT_GATEWAYS (default 1) how many gateways (replicas sharing Redis and Postgres).
 */
// Each target runs as this supervisor does: built (`pnpm start:split` runs dist/split.js), main.js
// beside it with plain node; from the sources (the tests), main.ts through tsx.
const fromBundle = import.meta.url.endsWith(".js");
const MAIN = fileURLToPath(new URL(fromBundle ? "./main.js" : "./main.ts", import.meta.url));
const MAIN_ARGS = fromBundle ? [MAIN] : ["--import", "tsx", MAIN];
const env = process.env;
const extractors = Math.max(1, Number(env.LOCUS_SPLIT_EXTRACTORS ?? 1));
const gateways = Math.max(1, Number(env.LOCUS_SPLIT_GATEWAYS ?? 1));

// Shared settings: the split shape, and one secret for the calls between services (made for this
// run when not given).
const shared: NodeJS.ProcessEnv = {
  ...env,
  LOCUS_SHAPE: "split",
  LOCUS_INTERNAL_SECRET: env.LOCUS_INTERNAL_SECRET ?? randomBytes(32).toString("base64url"),
};

/** The configuration every process will read, checked once here: a setting to fix stops nothing but this. */
function sharedConfig(): LocusConfig {
  try {
    const config = loadConfig(shared);
    if (config.metricsPort === 0) {
      throw new ConfigError([
        "LOCUS_METRICS_PORT: 0 would give each process a free port of its own choosing, another at every " +
          "restart, which nothing could scrape: give the first of the metrics ports (they count up from it)",
      ]);
    }
    return config;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`locus-split: ${err.message}\n`);
    process.exit(2);
  }
}
const config = sharedConfig();
const host = config.host;
const internalHost = host === "0.0.0.0" ? "127.0.0.1" : host;

interface Service extends SplitProcess {
  env?: NodeJS.ProcessEnv;
}

const layout = splitLayout({
  basePort: config.port,
  pdfExtractors: extractors,
  gateways,
  encoder: meaningStageRuns(config),
  metricsBasePort: config.metricsPort,
});
if (config.metricsPort !== undefined) {
  const path = resolve(join(config.dataDir, "prometheus-scrape.yml"));
  mkdirSync(config.dataDir, { recursive: true });
  writeFileSync(path, scrapeConfig(layout, internalHost));
  process.stderr.write(`locus-split: the scrape config of every process's metrics port is in ${path}\n`);
}
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
      // Unset by the environment unless the layout gives this process one of its own.
      LOCUS_METRICS_PORT: service.metricsPort === undefined ? undefined : String(service.metricsPort),
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
