import { randomUUID } from "node:crypto";
import express, { type NextFunction, type Request, type Response, type Router } from "express";
import type { Logger } from "@locus/runtime";
import { Attr, contextFrom, SpanKind, SpanStatusCode, startSpan, withSpan } from "@locus/telemetry";
import { keepRequestScope, requestContext } from "./request-context.ts";
import { errorHandler, notFound, type ErrorMapper } from "./errors.ts";

/** What the process's HTTP side tells whoever counts: each answer, by its declared route. */
export interface HttpObserver {
  requestAnswered(method: string, route: string, status: number, seconds: number): void;
}

/** The text of a Prometheus scrape. */
export interface MetricsExposition {
  exposition(): Promise<{ contentType: string; body: string }>;
}

/**
 * Probes and scrapes: every few seconds from the orchestrator and Prometheus. Not traced, and not
 * told to the observer once answered by their own routes (a /metrics nothing serves is an ordinary
 * 404): across a deployment's pods they are several requests a second, which in
 * locus_http_requests_total would drown a failing API's share of errors (LocusServerErrors).
 */
const PROBE_AND_SCRAPE_PATHS = new Set(["/healthz", "/readyz", "/metrics"]);

/**
 * A request's route as declared (`/api/files/:file_id`), never the path itself, so an id or a
 * token is never a label; mounted static files by their mount; `unmatched` for what nothing served.
 */
export function routeLabel(req: Request): string {
  const declared = (req.route as { path?: unknown } | undefined)?.path;
  // A route declared for several paths (["/dashboard", "/dashboard/"]) is named by its first.
  const route: unknown = Array.isArray(declared) ? declared[0] : declared;
  if (typeof route === "string") return `${req.baseUrl}${route}`;
  return req.baseUrl || "unmatched";
}

export interface ProcessAppOptions {
  logger: Logger;
  /** Told of every answer (metrics). */
  observer?: HttpObserver | undefined;
  /** Served at /metrics when given: only on a port that is not public (see buildLocus). */
  metrics?: MetricsExposition | undefined;
  /**
   * Each dependency's state for /readyz: "ok", "degraded" (away, but the process serves without
   * it) or "unavailable" (the process cannot serve: not ready).
   */
  readiness(): Promise<Record<string, string>>;
  /** Routes of the modules this process runs, in order. */
  routers: Router[];
  errorMappers?: ErrorMapper[];
  /** Express's "trust proxy": whose X-Forwarded-For and X-Forwarded-Proto to believe. */
  trustProxy?: false | number | string[];
  /**
   * Whether /readyz names each dependency and its state. Not on a public port: it would tell
   * anyone what Locus runs on. The states are in the log whenever a check fails.
   */
  readinessDetail?: boolean;
}

/**
 * The HTTP side of one Locus process: request ids and access logs, /healthz and /readyz for
 * probes, the routes of whichever modules run here, then JSON 404s and the error handler.
 */
export function createProcessApp(options: ProcessAppOptions): express.Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("trust proxy", options.trustProxy ?? false);

  app.use((req: Request, res: Response, next: NextFunction) => {
    // A correlation id from the caller (another Locus service, or a client's proxy) is kept when it
    // is plainly an id; otherwise, and by default, a new one. It follows the request to every
    // service it calls (see ServiceClient), so one request can be traced across the logs.
    const given = req.headers["x-request-id"];
    const requestId =
      typeof given === "string" && /^[A-Za-z0-9._-]{8,64}$/.test(given) ? given : randomUUID();
    const started = process.hrtime.bigint();
    res.setHeader("X-Request-Id", requestId);
    res.setHeader("X-Content-Type-Options", "nosniff");
    // A SERVER span per request, continuing the caller's trace when it sent one (another Locus
    // service, or a client's own tracing); named by its declared route once routing is done.
    const traced = !PROBE_AND_SCRAPE_PATHS.has(req.path);
    const parent = contextFrom(traced ? req.headers : undefined);
    const span = traced
      ? startSpan(req.method, {
          kind: SpanKind.SERVER,
          attributes: { [Attr.httpMethod]: req.method },
          parent,
        })
      : undefined;
    // Ended when the answer is sent ("finish"), or when the client leaves before it ("close").
    const endSpan = (answered: boolean) => {
      if (!span?.isRecording()) return;
      const route = routeLabel(req);
      if (route !== "unmatched") {
        span.updateName(`${req.method} ${route}`);
        span.setAttribute(Attr.httpRoute, route);
      }
      if (answered) {
        span.setAttribute(Attr.httpStatus, res.statusCode);
        if (res.statusCode >= 500) {
          span.setAttribute(Attr.errorType, String(res.statusCode));
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
      }
      span.end();
    };
    res.on("close", () => endSpan(false));
    res.on("finish", () => {
      endSpan(true);
      // The path only: query strings carry search text, and no part of a log line may carry a secret.
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const route = routeLabel(req);
      if (!PROBE_AND_SCRAPE_PATHS.has(route))
        options.observer?.requestAnswered(req.method, route, res.statusCode, ms / 1000);
      const path = req.path.startsWith("/previews/") ? "/previews/:token" : req.path;
      options.logger.info(
        { requestId, method: req.method, path, status: res.statusCode, ms: Math.round(ms * 10) / 10 },
        "request",
      );
    });
    const run = () =>
      requestContext.run({ requestId }, () => {
        keepRequestScope(req);
        next();
      });
    if (span) withSpan(span, run, parent);
    else run();
  });

  app.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  app.get("/readyz", async (_req, res) => {
    const checks = await options.readiness();
    const ready = Object.values(checks).every((v) => v === "ok" || v === "degraded");
    const status = ready ? "ready" : "unavailable";
    res.status(ready ? 200 : 503).json(options.readinessDetail === false ? { status } : { status, checks });
  });

  const metrics = options.metrics;
  if (metrics) {
    app.get("/metrics", async (_req, res) => {
      const { contentType, body } = await metrics.exposition();
      res.setHeader("Content-Type", contentType);
      res.setHeader("Cache-Control", "no-store");
      res.send(body);
    });
  }

  for (const router of options.routers) app.use(router);
  app.use(notFound);
  app.use(errorHandler(options.logger, options.errorMappers));
  return app;
}
