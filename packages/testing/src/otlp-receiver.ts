// A small OTLP/HTTP receiver for tests: what a collector is to Locus, on a port of its own. It
// takes OTLP's JSON encoding (OTEL_EXPORTER_OTLP_PROTOCOL=http/json) and keeps every span; a
// protobuf request is answered as a collector would and counted, not decoded.

import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";

export type SpanAttribute = string | number | boolean;

/** One span as received: ids in hex, attributes flattened to their values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a trace's root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's numbers: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  /** Its process's `service.name`. */
  service: string;
  attributes: Record<string, SpanAttribute>;
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
}

export interface OtlpReceiver {
  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT: spans are posted to `${url}/v1/traces`. */
  url: string;
  readonly spans: ReceivedSpan[];
  /** Requests in OTLP's protobuf encoding: answered, counted, not read. */
  readonly protobufRequests: number;
  /** Resolves with the spans once `found` says they are all there; fails after `timeoutMs`. */
  waitFor(
    found: (spans: ReceivedSpan[]) => boolean,
    timeoutMs?: number,
    what?: string,
  ): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface KeyValue {
  key: string;
  value?: AnyValue;
}
interface OtlpSpan {
  traceId?: string;
  spanId?: string;
  parentSpanId?: string;
  name?: string;
  kind?: number;
  attributes?: KeyValue[];
  status?: { code?: number };
}
interface ExportRequest {
  resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[];
}

/** OTLP/JSON's ids are hex; base64 (protobuf's JSON mapping) is turned into hex too. */
function hexId(id: string | undefined, bytes: number): string {
  if (!id) return "";
  if (id.length === bytes * 2 && /^[0-9a-f]+$/i.test(id)) return id.toLowerCase();
  return Buffer.from(id, "base64").toString("hex");
}

function flatten(attributes: KeyValue[] | undefined): Record<string, SpanAttribute> {
  const flat: Record<string, SpanAttribute> = {};
  for (const { key, value } of attributes ?? []) {
    if (!value) continue;
    if (value.stringValue !== undefined) flat[key] = value.stringValue;
    else if (value.intValue !== undefined) flat[key] = Number(value.intValue);
    else if (value.doubleValue !== undefined) flat[key] = value.doubleValue;
    else if (value.boolValue !== undefined) flat[key] = value.boolValue;
  }
  return flat;
}

async function body(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  return req.headers["content-encoding"] === "gzip" ? gunzipSync(raw) : raw;
}

/** Starts the receiver on a free port of 127.0.0.1. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  let protobufRequests = 0;
  const server = createServer((req, res) => {
    void (async () => {
      if (req.method !== "POST" || req.url !== "/v1/traces") {
        res.writeHead(404).end();
        return;
      }
      const data = await body(req);
      const type = req.headers["content-type"] ?? "";
      if (type.startsWith("application/x-protobuf")) {
        protobufRequests += 1;
        // An empty ExportTraceServiceResponse: all accepted.
        res.writeHead(200, { "Content-Type": "application/x-protobuf" }).end();
        return;
      }
      let request: ExportRequest;
      try {
        request = JSON.parse(data.toString("utf8")) as ExportRequest;
      } catch {
        res.writeHead(400, { "Content-Type": "application/json" }).end('{"message":"not JSON"}');
        return;
      }
      for (const resourceSpans of request.resourceSpans ?? []) {
        const service = String(flatten(resourceSpans.resource?.attributes)["service.name"] ?? "");
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            spans.push({
              traceId: hexId(span.traceId, 16),
              spanId: hexId(span.spanId, 8),
              parentSpanId: hexId(span.parentSpanId, 8),
              name: span.name ?? "",
              kind: span.kind ?? 0,
              service,
              attributes: flatten(span.attributes),
              statusCode: span.status?.code ?? 0,
            });
          }
        }
      }
      res.writeHead(200, { "Content-Type": "application/json" }).end("{}");
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    get protobufRequests() {
      return protobufRequests;
    },
    async waitFor(found, timeoutMs = 20_000, what = "the spans") {
      const deadline = Date.now() + timeoutMs;
      while (!found(spans)) {
        if (Date.now() > deadline) {
          const seen = spans.map((s) => `${s.service}: ${s.name}`).join("\n  ");
          throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}; received:\n  ${seen}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return spans;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
