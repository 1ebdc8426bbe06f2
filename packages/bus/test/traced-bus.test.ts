import { createLogger } from "@locus/runtime";
import { inSpan, startTracing, type Tracing } from "@locus/telemetry";
import { startOtlpReceiver, type OtlpReceiver } from "@locus/testing";
import { InProcessBus, ObservedBus, type Delivery } from "../src/index.ts";

/**
 * The observed bus's traces, around the in-process bus, exported for real (OTLP/JSON to a
 * receiver): a message's context travels in its headers, and each delivery, retries included,
 * is a CONSUMER span under the span that published it.
 */
describe("ObservedBus traces", () => {
  const logger = createLogger("test", "silent");
  const ids = {
    fileId: "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
    userId: "3f2504e0-4f89-11d3-9a0c-0305e82c3302",
  };
  let receiver: OtlpReceiver;
  let tracing: Tracing;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    tracing = await startTracing({ url: `${receiver.url}/v1/traces`, protocol: "http/json" }, "bus-test");
  });

  afterAll(async () => {
    await tracing.shutdown();
    await receiver.close();
  });

  it("continues the publisher's trace in each delivery's span, and leaves progress out", async () => {
    const inner = new InProcessBus(logger, 1);
    const bus = new ObservedBus(inner, {
      messagePublished: () => undefined,
      deliveryStarted: () => undefined,
      deliveryEnded: () => undefined,
      deliveryAbandoned: () => undefined,
    });
    const deliveries: Delivery[] = [];
    await bus.subscribe(
      { group: "indexer", topics: ["file.deleted", "file.progress"], concurrency: 1, maxAttempts: 3 },
      (delivery) => {
        deliveries.push(delivery);
        return delivery.topic === "file.deleted" && delivery.attempt === 1
          ? Promise.reject(new Error("not now"))
          : Promise.resolve();
      },
    );
    await inSpan("upload", {}, async () => {
      await bus.publish("file.deleted", ids);
      await bus.publish("file.progress", { ...ids, progress: 0.5 });
    });
    await inner.whenIdle();
    await bus.close();
    await tracing.flush();

    const spans = await receiver.waitFor(
      (s) => s.filter((span) => span.name === "process file.deleted").length === 2,
      10_000,
      "both deliveries' spans",
    );
    const upload = spans.find((s) => s.name === "upload");
    const published = spans.find((s) => s.name === "publish file.deleted");
    const processed = spans.filter((s) => s.name === "process file.deleted");
    expect(published).toMatchObject({ traceId: upload?.traceId, parentSpanId: upload?.spanId, kind: 4 });
    expect(published?.attributes).toMatchObject({
      "messaging.system": "locus_in_process",
      "messaging.destination.name": "file.deleted",
      "locus.file.id": ids.fileId,
    });
    for (const span of processed) {
      expect(span).toMatchObject({ traceId: upload?.traceId, parentSpanId: published?.spanId, kind: 5 });
      expect(span.attributes).toMatchObject({ "messaging.consumer.group.name": "indexer" });
    }
    expect(processed.map((s) => [s.attributes["locus.delivery.attempt"], s.statusCode])).toEqual([
      [1, 2],
      [2, 0],
    ]);
    // The headers the handler saw: the publish span's context, on the retry too.
    const traceparents = deliveries
      .filter((d) => d.topic === "file.deleted")
      .map((d) => d.headers?.traceparent);
    expect(traceparents).toEqual([
      `00-${upload?.traceId}-${published?.spanId}-01`,
      `00-${upload?.traceId}-${published?.spanId}-01`,
    ]);
    // A file's progress is published and handled, but neither is a span.
    expect(deliveries.some((d) => d.topic === "file.progress" && d.headers === undefined)).toBe(true);
    expect(spans.filter((s) => s.name.endsWith("file.progress"))).toEqual([]);
  });
});
