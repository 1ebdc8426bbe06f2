import { context, trace } from "@opentelemetry/api";
import { startOtlpReceiver, type OtlpReceiver } from "@locus/testing";
import { Attr, contextFrom, inSpan, SpanKind, startTracing, traceHeaders } from "../src/index.ts";

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

let receiver: OtlpReceiver;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
});

afterAll(async () => {
  await receiver.close();
});

// In this order: the first test checks that nothing was ever registered in this process.
describe("tracing", () => {
  it("without an endpoint registers nothing: spans are no-ops, no header is written, nothing is sent", async () => {
    const tracing = await startTracing({ url: undefined, protocol: "http/json" }, "test");
    expect(tracing.enabled).toBe(false);
    let recording = true;
    let headers: Record<string, string> = { untouched: "yes" };
    await inSpan("work", { kind: SpanKind.INTERNAL }, (span) => {
      recording = span.isRecording();
      headers = traceHeaders();
      return Promise.resolve();
    });
    expect(recording).toBe(false);
    expect(headers).toEqual({});
    // The API's own defaults: no provider behind its proxy, no context manager.
    expect(trace.getTracer("x").startSpan("y").spanContext().traceId).toBe(
      "00000000000000000000000000000000",
    );
    expect(context.active()).toBe(context.active());
    await tracing.shutdown();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(receiver.spans).toEqual([]);
    expect(receiver.protobufRequests).toBe(0);
  });

  it("with an endpoint sends spans as OTLP/JSON, named by the service, parented through trace headers", async () => {
    const tracing = await startTracing({ url: `${receiver.url}/v1/traces`, protocol: "http/json" }, "files");
    expect(tracing.enabled).toBe(true);
    let headers: Record<string, string> = {};
    await inSpan(
      "publish file.extracted",
      { kind: SpanKind.PRODUCER, attributes: { [Attr.fileKind]: "pdf" } },
      () => {
        headers = traceHeaders();
        return Promise.resolve();
      },
    );
    const [, traceId, parentId] = TRACEPARENT.exec(headers.traceparent ?? "") ?? [];
    expect(traceId).toBeDefined();
    // What a consumer in another process does with those headers.
    await inSpan(
      "process file.extracted",
      { kind: SpanKind.CONSUMER, parent: contextFrom(headers) },
      async () => {
        await expect(inSpan("fails", {}, () => Promise.reject(new Error("secret detail")))).rejects.toThrow();
      },
    );
    await tracing.shutdown();

    const spans = await receiver.waitFor((s) => s.length >= 3);
    const byName = new Map(spans.map((s) => [s.name, s]));
    const published = byName.get("publish file.extracted");
    const processed = byName.get("process file.extracted");
    const failed = byName.get("fails");
    expect(published).toMatchObject({ traceId, spanId: parentId, kind: 4, service: "files" });
    expect(published?.attributes[Attr.fileKind]).toBe("pdf");
    expect(processed).toMatchObject({ traceId, parentSpanId: parentId, kind: 5 });
    expect(failed).toMatchObject({ traceId, parentSpanId: processed?.spanId, statusCode: 2 });
    expect(failed?.attributes[Attr.errorType]).toBe("Error");
    // An error's message is never sent: it can quote what a user sent, a host or a URL.
    expect(JSON.stringify(spans)).not.toContain("secret detail");
    // Shut down, the process is back to the no-op API.
    expect(traceHeaders()).toEqual({});
  });

  it("sends OTLP's protobuf encoding by default (http/protobuf)", async () => {
    const tracing = await startTracing(
      { url: `${receiver.url}/v1/traces`, protocol: "http/protobuf" },
      "search",
    );
    await inSpan("search", {}, () => Promise.resolve());
    await tracing.flush();
    await tracing.shutdown();
    expect(receiver.protobufRequests).toBeGreaterThanOrEqual(1);
  });
});
