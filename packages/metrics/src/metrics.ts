// Every metric a Locus process exposes, declared once: its name, help, labels and buckets. Each
// process (or each Locus built in a test's process) has its own registry, so nothing is global.

import { collectDefaultMetrics, Counter, Histogram, Registry } from "prom-client";

/** Seconds: from a fast API answer to a slow search or upload. */
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Seconds: handling one message, from a deletion to the extraction of a long recording. */
const WORK_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];

/**
 * The process's metrics. Label values come from small fixed sets (routes as declared, file kinds,
 * failure codes, topics, modes, backends), never from ids or user input, so the series stay few.
 */
export class LocusMetrics {
  readonly registry = new Registry();

  private readonly httpRequests = new Counter({
    name: "locus_http_requests_total",
    help: "HTTP requests answered, by method, route (as declared, or `unmatched`) and status.",
    labelNames: ["method", "route", "status"] as const,
    registers: [this.registry],
  });

  private readonly httpDuration = new Histogram({
    name: "locus_http_request_duration_seconds",
    help: "Time from a request's arrival to the end of its answer, by method and route.",
    labelNames: ["method", "route"] as const,
    buckets: REQUEST_BUCKETS,
    registers: [this.registry],
  });

  private readonly authFailures = new Counter({
    name: "locus_auth_failures_total",
    help: "API requests refused for their key: missing, malformed, unknown or revoked.",
    labelNames: ["reason"] as const,
    registers: [this.registry],
  });

  private readonly rateLimited = new Counter({
    name: "locus_rate_limited_total",
    help: "API requests refused by the plan's rate limit (429), by plan.",
    labelNames: ["plan"] as const,
    registers: [this.registry],
  });

  private readonly uploads = new Counter({
    name: "locus_uploads_total",
    help: "Files accepted for processing, by kind.",
    labelNames: ["kind"] as const,
    registers: [this.registry],
  });

  private readonly filesFinished = new Counter({
    name: "locus_files_finished_total",
    help: "Files that became ready or failed, by kind and outcome (`ready`, or the failure's code).",
    labelNames: ["kind", "outcome"] as const,
    registers: [this.registry],
  });

  private readonly fileProcessing = new Histogram({
    name: "locus_file_processing_seconds",
    help: "Time from an upload's record to its file ready or failed, by kind and outcome (ready or failed).",
    labelNames: ["kind", "outcome"] as const,
    buckets: WORK_BUCKETS,
    registers: [this.registry],
  });

  private readonly busMessages = new Counter({
    name: "locus_bus_messages_total",
    help: "Bus messages published, and deliveries handled, retried or dead-lettered (event), by topic.",
    labelNames: ["topic", "event"] as const,
    registers: [this.registry],
  });

  private readonly busHandlerDuration = new Histogram({
    name: "locus_bus_handler_duration_seconds",
    help: "Time a consumer group's handler took over one delivery, by topic, group and outcome.",
    labelNames: ["topic", "group", "outcome"] as const,
    buckets: WORK_BUCKETS,
    registers: [this.registry],
  });

  private readonly searchDuration = new Histogram({
    name: "locus_search_duration_seconds",
    help: "Time to answer a search, by mode, index backend and outcome (ok or error).",
    labelNames: ["mode", "backend", "outcome"] as const,
    buckets: REQUEST_BUCKETS,
    registers: [this.registry],
  });

  private readonly searchFallbacks = new Counter({
    name: "locus_search_fallbacks_total",
    help: "ai searches answered with a local engine because the remote one failed, by component.",
    labelNames: ["component"] as const,
    registers: [this.registry],
  });

  constructor(options: { processMetrics?: boolean } = {}) {
    // CPU, memory, event-loop lag, handles and GC: the standard names (process_*, nodejs_*).
    if (options.processMetrics !== false) collectDefaultMetrics({ register: this.registry });
  }

  // The observers the services take (HttpObserver, GatewayObserver, FilesObserver, BusObserver,
  // SearchObserver), all answered here: the services know nothing of Prometheus.

  requestAnswered(method: string, route: string, status: number, seconds: number): void {
    this.httpRequests.inc({ method, route, status: String(status) });
    this.httpDuration.observe({ method, route }, seconds);
  }

  keyRefused(reason: string): void {
    this.authFailures.inc({ reason });
  }

  rateLimitRefused(plan: string): void {
    this.rateLimited.inc({ plan });
  }

  uploadAccepted(kind: string): void {
    this.uploads.inc({ kind });
  }

  fileFinished(kind: string, outcome: string, seconds: number): void {
    this.filesFinished.inc({ kind, outcome });
    this.fileProcessing.observe({ kind, outcome: outcome === "ready" ? "ready" : "failed" }, seconds);
  }

  messagePublished(topic: string): void {
    this.busMessages.inc({ topic, event: "published" });
  }

  deliveryEnded(topic: string, group: string, outcome: string, seconds: number): void {
    this.busMessages.inc({ topic, event: outcome });
    this.busHandlerDuration.observe({ topic, group, outcome }, seconds);
  }

  searchAnswered(mode: string, backend: string, outcome: string, seconds: number): void {
    this.searchDuration.observe({ mode, backend, outcome }, seconds);
  }

  searchFellBack(component: string): void {
    this.searchFallbacks.inc({ component });
  }

  /** The text a Prometheus scrape reads. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
