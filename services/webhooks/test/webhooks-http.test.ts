import type { AddressInfo } from "node:net";
import { Router } from "express";
import type { EventDto, WebhookDeliverySummaryDto, WebhookEndpointDto } from "@locus/contracts";
import { createProcessApp, ServiceIdentity } from "@locus/http";
import { createLogger } from "@locus/runtime";
import type { WebhooksApi } from "../src/webhooks-api.ts";
import { WebhooksHttpClient, webhooksInternalRouter } from "../src/webhooks-http.ts";

const SECRET = "Yq3v9XwK2pL7sD0fG5hJ8kZ1cV4bN6mQ-_aRtEuIoP";
const AT = "2026-01-02T03:04:05.000Z";
const endpoint: WebhookEndpointDto = {
  id: "e/1",
  url: "https://hooks.test/in",
  description: "CI",
  events: ["file.ready"],
  enabled: true,
  disabled_at: null,
  disabled_reason: null,
  last_success_at: null,
  previous_secret_expires_at: null,
  created_at: AT,
  updated_at: AT,
};
const withSecret = { ...endpoint, secret: "whsec_abc" };
const event: EventDto = {
  id: "ev/1",
  type: "file.ready",
  timestamp: AT,
  data: {
    file: {
      id: "f1",
      original_name: "a.pdf",
      status: "ready",
      file_type: "pdf",
      mime_type: "application/pdf",
      size_bytes: 10,
      page_count: 1,
      duration_s: null,
      passage_count: 1,
      progress: 1,
      metadata: {},
      error: null,
      created_at: AT,
      updated_at: AT,
    },
  },
};
const delivery: WebhookDeliverySummaryDto = {
  id: "d/1",
  event_id: "ev1",
  event_type: "file.ready",
  status: "pending",
  attempts: 1,
  max_attempts: 8,
  next_attempt_at: null,
  last_status_code: null,
  last_error: null,
  created_at: AT,
  updated_at: AT,
};

/** WebhooksApi in memory: keeps each call and answers with the records above. */
function webhooksApi(calls: unknown[][]): WebhooksApi {
  const call = <T>(answer: T, ...args: unknown[]) => {
    calls.push(args);
    return Promise.resolve(answer);
  };
  return {
    urlProblem: (url) => call(url.startsWith("http:") ? "Not https." : null, "urlProblem", url),
    create: (userId, input) => call(withSecret, "create", userId, input),
    list: (userId) => call([endpoint], "list", userId),
    get: (userId, id) => call(endpoint, "get", userId, id),
    update: (userId, id, change) => call(endpoint, "update", userId, id, change),
    delete: (userId, id) => call(undefined, "delete", userId, id),
    rotateSecret: (userId, id, rotation) => call(withSecret, "rotateSecret", userId, id, rotation),
    deliveries: (userId, id, page) =>
      call({ deliveries: [], next_cursor: null }, "deliveries", userId, id, page),
    redeliver: (userId, id, deliveryId) => call(delivery, "redeliver", userId, id, deliveryId),
    events: (userId, query) => call({ events: [event], next_cursor: "c/2" }, "events", userId, query),
    event: (userId, id) => call(event, "event", userId, id),
  };
}

describe("webhooks over internal HTTP: WebhooksHttpClient and webhooksInternalRouter", () => {
  it("carries every call of WebhooksApi there and back, on the wire as before", async () => {
    const identity = new ServiceIdentity(SECRET);
    const calls: unknown[][] = [];
    const seen: string[] = [];
    const recorder = Router().use((req, res, next) => {
      res.on("finish", () => seen.push(`${req.method} ${req.originalUrl} ${res.statusCode}`));
      next();
    });
    const app = createProcessApp({
      logger: createLogger("test", "silent"),
      readiness: () => Promise.resolve({}),
      routers: [recorder, webhooksInternalRouter(webhooksApi(calls), identity)],
    });
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    try {
      const webhooks = new WebhooksHttpClient(
        `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        identity,
      );
      const input = { url: "https://hooks.test/in", events: ["file.ready" as const], description: "CI" };

      expect(await webhooks.urlProblem("http://hooks.test")).toBe("Not https.");
      expect(await webhooks.urlProblem("https://hooks.test")).toBeNull();
      expect(await webhooks.create("u1", input)).toEqual(withSecret);
      expect(await webhooks.list("u1")).toEqual([endpoint]);
      expect(await webhooks.get("u1", "e/1")).toEqual(endpoint);
      expect(await webhooks.update("u1", "e/1", { enabled: false })).toEqual(endpoint);
      await webhooks.delete("u1", "e/1");
      expect(await webhooks.rotateSecret("u1", "e/1")).toEqual(withSecret);
      expect(await webhooks.rotateSecret("u1", "e/1", { overlap_s: 0 })).toEqual(withSecret);
      expect(await webhooks.deliveries("u1", "e/1", { limit: 5, cursor: "d/9" })).toEqual({
        deliveries: [],
        next_cursor: null,
      });
      await webhooks.deliveries("u1", "e/1", { limit: 20 });
      expect(await webhooks.redeliver("u1", "e/1", "d/1")).toEqual(delivery);
      const query = {
        limit: 3,
        cursor: "c/1",
        types: ["file.ready" as const, "file.deleted" as const],
        occurredAfter: AT,
      };
      expect(await webhooks.events("u1", query)).toEqual({ events: [event], next_cursor: "c/2" });
      expect(await webhooks.event("u1", "ev/1")).toEqual(event);

      expect(calls).toEqual([
        ["urlProblem", "http://hooks.test"],
        ["urlProblem", "https://hooks.test"],
        ["create", "u1", input],
        ["list", "u1"],
        ["get", "u1", "e/1"],
        ["update", "u1", "e/1", { enabled: false }],
        ["delete", "u1", "e/1"],
        ["rotateSecret", "u1", "e/1", {}],
        ["rotateSecret", "u1", "e/1", { overlap_s: 0 }],
        ["deliveries", "u1", "e/1", { limit: 5, cursor: "d/9" }],
        ["deliveries", "u1", "e/1", { limit: 20 }],
        ["redeliver", "u1", "e/1", "d/1"],
        ["events", "u1", query],
        ["event", "u1", "ev/1"],
      ]);
      expect(seen).toEqual([
        "POST /internal/webhooks/url-check 200",
        "POST /internal/webhooks/url-check 200",
        "POST /internal/webhooks 201",
        "GET /internal/webhooks 200",
        "GET /internal/webhooks/e%2F1 200",
        "PATCH /internal/webhooks/e%2F1 200",
        "DELETE /internal/webhooks/e%2F1 204",
        "POST /internal/webhooks/e%2F1/rotate-secret 200",
        "POST /internal/webhooks/e%2F1/rotate-secret 200",
        "GET /internal/webhooks/e%2F1/deliveries?limit=5&cursor=d%2F9 200",
        "GET /internal/webhooks/e%2F1/deliveries?limit=20 200",
        "POST /internal/webhooks/e%2F1/deliveries/d%2F1/redeliver 200",
        `GET /internal/events?query=${Buffer.from(JSON.stringify(query)).toString("base64url")} 200`,
        "GET /internal/events/ev%2F1 200",
      ]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
