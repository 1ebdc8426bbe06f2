// Starting and stopping the process's tracer provider: only when an OTLP endpoint is configured.
// The SDK is imported then and only then, so a process without traces never loads it.

import { context, diag, DiagLogLevel, propagation, trace, type DiagLogger } from "@opentelemetry/api";

/** Where spans go, as the configuration says (see LocusConfig.tracing). */
export interface TracingSettings {
  /** The OTLP/HTTP traces URL (…/v1/traces); undefined: tracing is off and nothing is registered. */
  url: string | undefined;
  /** How spans are encoded: OTLP's protobuf (the standard default) or its JSON. */
  protocol: "http/protobuf" | "http/json";
}

/** What is told of spans that could not be sent (a collector away): a warning, now and then. */
export interface TracingLogger {
  warn(fields: Record<string, unknown>, message: string): void;
}

export interface Tracing {
  readonly enabled: boolean;
  /** Sends the spans ended so far (tests; shutdown does it too). */
  flush(): Promise<void>;
  /** Sends what is left, within `timeoutMs`, stops the provider and unregisters it. Idempotent. */
  shutdown(timeoutMs?: number): Promise<void>;
}

const OFF: Tracing = {
  enabled: false,
  flush: () => Promise.resolve(),
  shutdown: () => Promise.resolve(),
};

/** A failed export is said at most this often: a collector that is down must not flood the log. */
const WARN_EVERY_MS = 60_000;

/**
 * Starts tracing for this process when `settings.url` is set: a tracer provider with a batching
 * exporter to that URL, registered globally with the W3C trace-context propagator and an
 * AsyncLocalStorage context manager, its resource's `service.name` being `serviceName` (the
 * process's role: `locus`, `gateway`, `extractor-pdf`…). OpenTelemetry's own variables are read
 * by its SDK as usual: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (which win), OTEL_TRACES_SAMPLER
 * and its _ARG, OTEL_BSP_*, OTEL_EXPORTER_OTLP_(TRACES_)HEADERS, _TIMEOUT, _COMPRESSION, _CERTIFICATE.
 * Otherwise nothing is registered and the spans Locus makes are the API's no-ops.
 */
export async function startTracing(
  settings: TracingSettings,
  serviceName: string,
  logger?: TracingLogger,
): Promise<Tracing> {
  if (!settings.url) return OFF;
  const [{ NodeTracerProvider, BatchSpanProcessor }, resources, exporters] = await Promise.all([
    import("@opentelemetry/sdk-trace-node"),
    import("@opentelemetry/resources"),
    settings.protocol === "http/json"
      ? import("@opentelemetry/exporter-trace-otlp-http")
      : import("@opentelemetry/exporter-trace-otlp-proto"),
  ]);
  if (logger) diag.setLogger(exportWarnings(logger), DiagLogLevel.ERROR);
  const resource = resources
    .defaultResource()
    .merge(resources.resourceFromAttributes({ "service.name": serviceName, "service.namespace": "locus" }))
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new exporters.OTLPTraceExporter({ url: settings.url }))],
  });
  provider.register();
  let stopped: Promise<void> | undefined;
  return {
    enabled: true,
    flush: () => provider.forceFlush(),
    shutdown: (timeoutMs = 5_000) =>
      (stopped ??= (async () => {
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, timeoutMs);
          timer.unref();
        });
        await Promise.race([provider.shutdown().catch(() => undefined), late]);
        clearTimeout(timer);
        trace.disable();
        propagation.disable();
        context.disable();
        diag.disable();
      })()),
  };
}

/**
 * The SDK's own complaints (an export that failed, a span dropped from a full queue) as a warning
 * in the process's log, one a minute at most with the number left unsaid. Only the SDK's first
 * words are kept: its details can quote a response body.
 */
function exportWarnings(logger: TracingLogger): DiagLogger {
  let lastAt = 0;
  let unsaid = 0;
  const warn = (message: string) => {
    const now = Date.now();
    if (now - lastAt < WARN_EVERY_MS) {
      unsaid += 1;
      return;
    }
    lastAt = now;
    logger.warn(
      { component: "telemetry", reason: message.slice(0, 200), unsaid },
      "traces could not be sent",
    );
    unsaid = 0;
  };
  const ignore = () => undefined;
  return { error: warn, warn, info: ignore, debug: ignore, verbose: ignore };
}
