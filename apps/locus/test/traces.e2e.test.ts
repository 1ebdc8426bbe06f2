import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  client,
  createUserWithKey,
  QUALITY_FIXTURES,
  removeDataDir,
  startLocus,
  startOtlpReceiver,
  uploadAndWait,
  type LocusProcess,
  type OtlpReceiver,
  type ReceivedSpan,
} from "@locus/testing";

/**
 * Traces of the all-in-one process, exported for real over OTLP/HTTP (JSON) to a receiver: one
 * trace from an upload's request through the bus to its file's `ready`, and a span per search
 * with its mode and backend. The split shape's trace, across processes and RabbitMQ's headers,
 * is in split.e2e.
 */
let receiver: OtlpReceiver;
let locus: LocusProcess;
let key: string;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  locus = await startLocus({
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      // Spans are sent every 200 ms rather than every 5 s: the test waits less.
      OTEL_BSP_SCHEDULE_DELAY: "200",
    },
  });
  ({ key } = await createUserWithKey(locus.dataDir, { plan: "pro" }));
}, 60_000);

afterAll(async () => {
  await locus?.stop();
  await receiver?.close();
  if (locus) removeDataDir(locus.dataDir);
});

/** The span's ancestors in its trace, nearest first, up to its root. */
function ancestry(span: ReceivedSpan, spans: readonly ReceivedSpan[]): ReceivedSpan[] {
  const chain: ReceivedSpan[] = [];
  let parentId = span.parentSpanId;
  while (parentId) {
    const parent = spans.find((s) => s.traceId === span.traceId && s.spanId === parentId);
    if (!parent) throw new Error(`${span.name}: its ancestor ${parentId} was not received`);
    chain.push(parent);
    parentId = parent.parentSpanId;
  }
  return chain;
}

const named = (spans: readonly ReceivedSpan[], name: string, fileId?: string) =>
  spans.find((s) => s.name === name && (fileId === undefined || s.attributes["locus.file.id"] === fileId));

it("traces an upload from its request through the bus to its file's ready, in one trace", async () => {
  const c = client(locus.baseUrl, key);
  const pdf = readFileSync(join(QUALITY_FIXTURES, "flite.pdf"));
  const file = await uploadAndWait(c, pdf, "flite.pdf");
  expect(file.status).toBe("ready");

  const spans = await receiver.waitFor((s) => named(s, "file ready", file.id) !== undefined);
  const ready = named(spans, "file ready", file.id)!;
  const http = spans.find((s) => s.name === "POST /api/files/upload" && s.traceId === ready.traceId);
  expect(http).toMatchObject({ kind: 2, parentSpanId: "", service: "locus" });
  expect(http?.attributes).toMatchObject({
    "http.request.method": "POST",
    "http.route": "/api/files/upload",
    "http.response.status_code": 200,
  });

  // From ready back to the request, every step: the bus's spans on both sides of each message.
  const path = [ready, ...ancestry(ready, spans)].map((s) => s.name).reverse();
  expect(path).toEqual([
    "POST /api/files/upload",
    "publish file.uploaded.pdf",
    "process file.uploaded.pdf",
    "extract pdf",
    "publish file.extracted",
    "process file.extracted",
    "index",
    "publish file.indexed",
    "process file.indexed",
    "file ready",
  ]);
  const trace = spans.filter((s) => s.traceId === ready.traceId);
  expect(named(trace, "upload")).toMatchObject({ parentSpanId: http?.spanId });
  expect(named(trace, "upload")?.attributes).toMatchObject({
    "locus.file.id": file.id,
    "locus.file.kind": "pdf",
    "locus.file.bytes": pdf.length,
  });
  expect(named(trace, "process file.uploaded.pdf")).toMatchObject({ kind: 5 });
  expect(named(trace, "process file.uploaded.pdf")?.attributes).toMatchObject({
    "messaging.system": "locus_in_process",
    "messaging.consumer.group.name": "extractor-pdf",
    "locus.delivery.attempt": 1,
  });
  const extract = named(trace, "extract pdf");
  expect(extract?.attributes).toMatchObject({
    "locus.file.id": file.id,
    "locus.file.kind": "pdf",
    "locus.file.pages": file.page_count,
    "locus.file.passages": file.passage_count,
  });
  expect(["poppler", "pdfjs"]).toContain(extract?.attributes["locus.pdf.engine"]);
  expect(ready.attributes).toMatchObject({ "locus.file.status": "ready", "locus.file.kind": "pdf" });
  expect(trace.every((s) => s.service === "locus" && s.statusCode !== 2)).toBe(true);
  // A file's progress is left out of its trace (a span a second of a long extraction).
  expect(trace.filter((s) => s.name.includes("file.progress"))).toEqual([]);
  // The key and the file's name are never in a span.
  expect(JSON.stringify(spans)).not.toContain(key);
  expect(JSON.stringify(spans)).not.toContain("flite.pdf");
}, 90_000);

// Searches the manual the test above uploaded.
it("traces each search with its mode and backend, the index's queries and the ai engines", async () => {
  const c = client(locus.baseUrl, key);
  const question = "which voices can synthesize speech";
  for (const mode of ["quick", "ai"]) {
    const res = await c.get(`/api/search?q=${encodeURIComponent(question)}&mode=${mode}`);
    expect(res.status).toBe(200);
    await res.arrayBuffer();
  }
  const probe = await fetch(`${locus.baseUrl}/healthz`);
  await probe.arrayBuffer();

  const spans = await receiver.waitFor(
    (s) => named(s, "search quick") !== undefined && named(s, "summarize") !== undefined,
  );
  const quick = named(spans, "search quick")!;
  expect(quick.attributes).toMatchObject({
    "locus.search.mode": "quick",
    "locus.search.backend": "sqlite",
    "locus.search.limit": expect.any(Number) as number,
  });
  expect(quick.attributes["locus.search.results"]).toBeGreaterThan(0);
  expect(ancestry(quick, spans).map((s) => s.name)).toEqual(["GET /api/search"]);
  const quickIndex = spans.filter((s) => s.parentSpanId === quick.spanId).map((s) => s.name);
  expect(quickIndex).toEqual(["index search"]);

  const ai = named(spans, "search ai")!;
  expect(ai.attributes).toMatchObject({
    "locus.search.mode": "ai",
    "locus.search.backend": "sqlite",
    // The default engines: the sentence encoder and the extractive summary.
    "locus.ai.embedder": "all-MiniLM-L6-v2",
    "locus.ai.summarizer": expect.any(String) as string,
  });
  const children = spans.filter((s) => s.parentSpanId === ai.spanId);
  expect(
    children
      .map((s) => `${s.name} ${s.attributes["locus.index.query"] ?? s.attributes["locus.ai.engine"]}`)
      .sort(),
  ).toEqual(
    [
      "embed question all-MiniLM-L6-v2",
      "index search bm25",
      "index search vector",
      `summarize ${String(ai.attributes["locus.ai.summarizer"])}`,
    ].sort(),
  );
  // Probes make no trace; the query's text is never in a span.
  expect(spans.some((s) => s.name.includes("/healthz"))).toBe(false);
  expect(JSON.stringify(spans)).not.toContain("synthesize");
}, 90_000);
