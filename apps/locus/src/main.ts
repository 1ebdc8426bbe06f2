import { ConfigError, createLogger, loadConfig, ModuleManager, type LocusConfig } from "@locus/runtime";
import { Infrastructure } from "./infrastructure.ts";
import { moduleDescriptors, type Running } from "./modules.ts";

/**
 * Locus: starts the targets named by LOCUS_TARGETS (default `all`: every module in this process,
 * on embedded SQLite, local disk and the in-process bus).
 */
function readConfig(): LocusConfig {
  try {
    const config = loadConfig();
    const split = !(config.targets.length === 1 && config.targets[0] === "all");
    if (split && config.adapters.bus === "memory") {
      // Modules in different processes cannot share an in-process bus: messages would vanish.
      throw new ConfigError([
        `LOCUS_TARGETS: "${config.targets.join(",")}" runs part of Locus in this process, which needs a shared message bus, ` +
          "metadata store and search index; this build has only the embedded ones, so use LOCUS_TARGETS=all.",
      ]);
    }
    return config;
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}

const config = readConfig();
const logger = createLogger("locus", config.logLevel);
const infra = new Infrastructure(config, logger);
const running: Running = {};
const manager = new ModuleManager(moduleDescriptors(infra, logger, running), logger);

let stopping: Promise<void> | null = null;
function shutdown(reason: string, code: number): Promise<void> {
  stopping ??= (async () => {
    logger.info({ reason }, "stopping");
    // Stop taking requests, then let handlers in flight finish, then stop the modules they use.
    await running.gateway?.stop();
    await infra.drainBus();
    await manager.stop();
    await infra.close();
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

try {
  await infra.sweepLocalBlobs();
  await manager.start(config.targets);
  await running.files?.startRecovery({ everything: infra.busIsInProcess });
  logger.info({ targets: config.targets, dataDir: config.dataDir }, "Locus started");
} catch (err) {
  logger.fatal({ err }, "Locus failed to start");
  await infra.close();
  process.exit(1);
}
