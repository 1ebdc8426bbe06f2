import express from "express";
import { createProcessApp, type ErrorMapper } from "@locus/http";
import { createLogger, ModuleManager, type LocusConfig, type Logger } from "@locus/runtime";
import { Infrastructure } from "./infrastructure.ts";
import { moduleDescriptors, type LocusModule, type ModuleName } from "./modules.ts";

/** Locus as configured, built in this process: what `pnpm start` runs, and what tests drive. */
export interface Locus {
  /**
   * The process's HTTP app: /healthz, /readyz and the routes of every module, which answer once
   * start() has resolved (before, a request gets the app's 404). Serve it, or hand it to a test.
   */
  readonly app: express.Express;
  /**
   * An app that serves only /metrics, for LOCUS_METRICS_PORT: how a process whose port is public
   * (the gateway's) is scraped. Other processes serve /metrics on their own port too.
   */
  readonly metricsApp: express.Express;
  /** The adapters the modules share, built on first use (tests reach the store through it). */
  readonly infra: Infrastructure;
  /**
   * Starts the configured targets' modules, dependencies first, then their after-start work (the
   * files module's recovery). On failure everything started is stopped and closed again.
   */
  start(): Promise<void>;
  /** Lets bus work in flight finish, stops the modules in reverse, and closes the adapters. */
  stop(): Promise<void>;
}

export function buildLocus(
  config: LocusConfig,
  logger: Logger = createLogger(config.serviceName, config.logLevel),
): Locus {
  const infra = new Infrastructure(config, logger);
  const manager = new ModuleManager<ModuleName, LocusModule>(moduleDescriptors(infra, logger), logger);
  const plan = manager.plan(config.targets);
  // Filled as the modules start: the app exists before them, so tests and the server hold one app.
  const moduleRoutes = express.Router();
  const errorMappers: ErrorMapper[] = [];
  const app = createProcessApp({
    logger: logger.child({ module: "http" }),
    readiness: () => infra.readiness.report(),
    routers: [moduleRoutes],
    errorMappers,
    trustProxy: config.trustProxy,
    // A process serving the public API keeps its dependencies (and its metrics) to itself.
    readinessDetail: !plan.includes("gateway"),
    observer: infra.metrics,
    metrics: plan.includes("gateway") ? undefined : infra.metrics,
  });
  const metricsApp = createProcessApp({
    logger: logger.child({ module: "metrics-http" }),
    readiness: () => infra.readiness.report(),
    routers: [],
    metrics: infra.metrics,
  });

  return {
    app,
    metricsApp,
    infra,
    async start() {
      try {
        await infra.sweepLocalBlobs();
        await manager.start(config.targets);
      } catch (err) {
        await infra.close();
        throw err;
      }
      // The gateway's routes first: its /previews/sandbox must win over the files module's
      // /previews/:token.
      const routeOrder = [...plan].sort((a, b) => Number(b === "gateway") - Number(a === "gateway"));
      for (const name of routeOrder) {
        const module = manager.get(name);
        for (const router of module?.routers ?? []) moduleRoutes.use(router);
        errorMappers.push(...(module?.errorMappers ?? []));
      }
    },
    async stop() {
      await infra.drainBus();
      await manager.stop();
      await infra.close();
    },
  };
}
