// The spans Locus makes, through @opentelemetry/api only. Until startTracing registers a provider
// (never, unless an OTLP endpoint is set), the API's tracer is a no-op: a span costs a call, holds
// nothing, exports nothing, and no trace header is ever written.

import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
} from "@opentelemetry/api";

export { SpanKind, SpanStatusCode, type Attributes, type Span };

/**
 * Attribute names, in one place. The OpenTelemetry semantic conventions' where one exists (HTTP,
 * messaging); Locus's own under `locus.`. Values are from small sets, sizes and file ids: never a
 * user's or a key's id, a query's text, a file's name, a token or any part of a secret.
 */
export const Attr = {
  httpMethod: "http.request.method",
  httpRoute: "http.route",
  httpStatus: "http.response.status_code",
  /** The Locus service called over HTTP (files, search). */
  peerService: "peer.service",
  messagingSystem: "messaging.system",
  messagingOperation: "messaging.operation.type",
  messagingDestination: "messaging.destination.name",
  messagingGroup: "messaging.consumer.group.name",
  /** 1 on a message's first delivery, counting up on each retry. */
  deliveryAttempt: "locus.delivery.attempt",
  errorType: "error.type",
  fileId: "locus.file.id",
  fileKind: "locus.file.kind",
  /** ready or failed: the status a file was moved to. */
  fileStatus: "locus.file.status",
  filePassages: "locus.file.passages",
  filePages: "locus.file.pages",
  fileBytes: "locus.file.bytes",
  /** The reader of a PDF's text layer (poppler or pdfjs). */
  pdfEngine: "locus.pdf.engine",
  /** The OCR engine of images, video frames and scanned pages (native or wasm). */
  ocrEngine: "locus.ocr.engine",
  speechEngine: "locus.speech.engine",
  searchMode: "locus.search.mode",
  /** The index's adapter: sqlite, postgres or elasticsearch. */
  searchBackend: "locus.search.backend",
  searchResults: "locus.search.results",
  searchLimit: "locus.search.limit",
  /** How the index was asked: bm25 (words) or vector (meaning). */
  indexQuery: "locus.index.query",
  indexHits: "locus.index.hits",
  /** An ai engine's name (an embedder's or a summarizer's, as the response's *_source says). */
  aiEngine: "locus.ai.engine",
  /** On a search's span: the engine whose vectors found passages by meaning, and the summary's. */
  aiEmbedder: "locus.ai.embedder",
  aiSummarizer: "locus.ai.summarizer",
  /** The engine whose failure made a search use the local one instead. */
  aiFallbackFrom: "locus.ai.fallback_from",
} as const;

/** Asked each time: a tracer kept would stay bound to the first provider registered (tests start several). */
const tracer = () => trace.getTracer("locus");

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The parent; by default the active context's span (none: a new trace). */
  parent?: Context;
}

/**
 * Runs `work` inside a new span, active for everything it awaits, and ends the span when it
 * settles. A failure marks the span as an error, with the error's kind (see errorType) only.
 */
export function inSpan<T>(name: string, options: SpanOptions, work: (span: Span) => Promise<T>): Promise<T> {
  const parent = options.parent ?? context.active();
  const spanOptions = {
    ...(options.kind === undefined ? {} : { kind: options.kind }),
    ...(options.attributes === undefined ? {} : { attributes: options.attributes }),
  };
  return tracer().startActiveSpan(name, spanOptions, parent, async (span) => {
    try {
      return await work(span);
    } catch (err) {
      failSpan(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

/** A span the caller ends itself (one whose end is an event, like an HTTP answer's). */
export function startSpan(name: string, options: SpanOptions): Span {
  return tracer().startSpan(
    name,
    {
      ...(options.kind === undefined ? {} : { kind: options.kind }),
      ...(options.attributes === undefined ? {} : { attributes: options.attributes }),
    },
    options.parent ?? context.active(),
  );
}

/** Runs `fn` with `span` active (its children and the trace headers injected below it are its own). */
export function withSpan<T>(span: Span, fn: () => T, parent: Context = context.active()): T {
  return context.with(trace.setSpan(parent, span), fn);
}

/**
 * Marks a span failed. Only the error's kind is recorded (a Locus error code, or the class's
 * name), never its message or stack: messages can quote a URL, a host or what a user sent.
 */
export function failSpan(span: Span, err: unknown): void {
  span.setAttribute(Attr.errorType, errorType(err));
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/** An error's kind for telemetry: its `code` when it is a short identifier, else its class's name. */
export function errorType(err: unknown): string {
  const code: unknown = (err as { code?: unknown } | null)?.code;
  if (typeof code === "string" && /^[A-Za-z0-9_.-]{1,64}$/.test(code)) return code;
  return err instanceof Error ? err.name : "unknown";
}

/** The span active now, to add attributes to (a no-op span when tracing is off). */
export function activeSpan(): Span | undefined {
  return trace.getActiveSpan();
}

/**
 * The active context as trace headers (W3C `traceparent`, and `tracestate` when there is one),
 * for a message or a request leaving this process. Empty when tracing is off.
 */
export function traceHeaders(from: Context = context.active()): Record<string, string> {
  const headers: Record<string, string> = {};
  propagation.inject(from, headers);
  return headers;
}

/**
 * The context that trace headers name, as the parent of the work they came with; the root
 * context (a new trace) when they name none or tracing is off. HTTP's repeated headers
 * (string arrays) are read as the propagator reads them.
 */
export function contextFrom(
  headers: Readonly<Record<string, string | string[] | undefined>> | undefined,
): Context {
  if (!headers) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, headers);
}
