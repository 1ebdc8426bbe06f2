import { OcrSetupError } from "@locus/ocr-reader";
import { startHttpServer, type HttpServer } from "@locus/http";
import { ConfigError, createLogger, loadConfig, type LocusConfig } from "@locus/runtime";
import { startTracing } from "@locus/telemetry";
import { buildLocus } from "./build-locus.ts";

/**
 * Locus: starts the targets named by LOCUS_TARGETS (default `all`: every module in this process,
 * on embedded SQLite, local disk and the in-process bus), and serves their HTTP routes with
 * /healthz and /readyz on PORT.
 */
function readConfig(): LocusConfig {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}

const config = readConfig();
const logger = createLogger(config.serviceName, config.logLevel);
// Before anything that makes spans; without an OTLP endpoint nothing is registered.
const tracing = await startTracing(config.tracing, config.serviceName, logger.child({ module: "telemetry" }));
const locus = buildLocus(config, logger);
let http: HttpServer | undefined;
let metricsHttp: HttpServer | undefined;

let stopping: Promise<void> | null = null;
function shutdown(reason: string, code: number): Promise<void> {
  stopping ??= (async () => {
    logger.info({ reason }, "stopping");
    // Stop taking requests, then let handlers in flight finish, then stop the modules they use.
    await http?.stop();
    await metricsHttp?.stop();
    await locus.stop();
    // The spans of the last work, sent before the process ends.
    await tracing.shutdown();
    logger.info("stopped");
    process.exit(code);
  })();
  return stopping;
}

process.on("SIGINT", () => void shutdown("SIGINT", 0));
process.on("SIGTERM", () => void shutdown("SIGTERM", 0));
process.on("unhandledRejection", (err) => {
  // A bug, but not one worth losing every request in flight for: log it and carry on.
  logger.error({ err }, "unhandled promise rejection");
});
process.on("uncaughtException", (err) => {
  logger.fatal({ err }, "uncaught exception; stopping");
  void shutdown("uncaughtException", 1);
});

function failedToStart(err: unknown): never {
  logger.fatal({ err }, "Locus failed to start");
  // A setting to fix: say it plainly too, not only inside a JSON log line.
  if (err instanceof OcrSetupError || err instanceof ConfigError) {
    process.stderr.write(`Locus cannot start: ${err.message}\n`);
  }
  process.exit(1);
}

/** Whether this process answers clients (the gateway, alone or with everything), not only other services. */
const servesPublicApi = config.targets.some((t) => t === "all" || t === "gateway");

// A start that fails has stopped and closed what it started.
await locus.start().catch(failedToStart);
try {
  http = await startHttpServer(locus.app, {
    host: config.host,
    port: config.port,
    logger: logger.child({ module: "http" }),
    // Clients reach the gateway only (16 KiB, Node's default); files and search, serving the
    // gateway, take its longer internal encoding of a client's filters.
    ...(servesPublicApi ? {} : { maxHeaderBytes: 64 * 1024 }),
  });
  if (config.metricsPort !== undefined) {
    metricsHttp = await startHttpServer(locus.metricsApp, {
      host: config.host,
      port: config.metricsPort,
      logger: logger.child({ module: "metrics-http" }),
    });
  }
} catch (err) {
  await http?.stop();
  await locus.stop();
  failedToStart(err);
}
logger.info(
  {
    targets: config.targets,
    url: http.url,
    ...(metricsHttp ? { metricsUrl: `${metricsHttp.url}/metrics` } : {}),
    ...(tracing.enabled ? { traces: config.tracing.protocol } : {}),
  },
  "Locus started",
);
