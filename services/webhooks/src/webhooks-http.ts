import express, { Router, type Request } from "express";
import { z } from "zod";
import {
  FileEventType,
  WebhookDeliveryPageDto,
  WebhookDeliverySummaryDto,
  WebhookEndpointDto,
  WebhookEndpointListDto,
  WebhookEndpointWithSecretDto,
  type WebhookEndpointChangeInput,
  type WebhookEndpointInput,
} from "@locus/contracts";
import { callerOf, ServiceClient, type ServiceIdentity } from "@locus/http";
import type { WebhooksApi } from "./webhooks-api.ts";

/** What the gateway sends: already validated there, checked again against a mismatched version. */
const EndpointInput = z.object({
  url: z.string(),
  events: z.array(FileEventType).min(1),
  description: z.string(),
});
const EndpointChange = z.object({
  url: z.string().optional(),
  events: z.array(FileEventType).min(1).optional(),
  description: z.string().optional(),
  enabled: z.boolean().optional(),
});
const UrlProblem = z.object({ problem: z.string().nullable() });

/**
 * The webhooks process's internal interface: the gateway authenticates the caller, then calls here
 * as the user its service token names. Never exposed publicly.
 */
export function webhooksInternalRouter(webhooks: WebhooksApi, identity: ServiceIdentity): Router {
  const router = Router();
  const guard = identity.require("webhooks");
  const json = express.json({ limit: "16kb" });
  const param = (req: Request, name: string) => String(req.params[name] ?? "");

  router.post("/internal/webhooks/url-check", guard, json, async (req, res) => {
    const { url } = z.object({ url: z.string() }).parse(req.body);
    res.json({ problem: await webhooks.urlProblem(url) });
  });
  router.post("/internal/webhooks", guard, json, async (req, res) => {
    res.status(201).json(await webhooks.create(callerOf(res), EndpointInput.parse(req.body)));
  });
  router.get("/internal/webhooks", guard, async (_req, res) => {
    res.json(await webhooks.list(callerOf(res)));
  });
  router.get("/internal/webhooks/:id", guard, async (req, res) => {
    res.json(await webhooks.get(callerOf(res), param(req, "id")));
  });
  router.patch("/internal/webhooks/:id", guard, json, async (req, res) => {
    res.json(await webhooks.update(callerOf(res), param(req, "id"), EndpointChange.parse(req.body)));
  });
  router.delete("/internal/webhooks/:id", guard, async (req, res) => {
    await webhooks.delete(callerOf(res), param(req, "id"));
    res.status(204).end();
  });
  router.post("/internal/webhooks/:id/rotate-secret", guard, async (req, res) => {
    res.json(await webhooks.rotateSecret(callerOf(res), param(req, "id")));
  });
  router.get("/internal/webhooks/:id/deliveries", guard, async (req, res) => {
    const query = req.query as Record<string, string | undefined>;
    res.json(
      await webhooks.deliveries(callerOf(res), param(req, "id"), {
        limit: Number(query.limit ?? 20),
        before: query.before,
      }),
    );
  });
  router.post("/internal/webhooks/:id/deliveries/:delivery/redeliver", guard, async (req, res) => {
    res.json(await webhooks.redeliver(callerOf(res), param(req, "id"), param(req, "delivery")));
  });
  return router;
}

/** WebhooksApi over HTTP, for a gateway that runs apart from the webhooks service. */
export class WebhooksHttpClient implements WebhooksApi {
  private readonly client: ServiceClient;

  constructor(baseUrl: string, identity: ServiceIdentity) {
    this.client = new ServiceClient(baseUrl, "webhooks", identity);
  }

  private static body(value: unknown): RequestInit {
    return { headers: { "Content-Type": "application/json" }, body: JSON.stringify(value) };
  }

  async urlProblem(url: string): Promise<string | null> {
    // The user is not needed to check a URL, but every internal call names one: none here.
    const body = await this.client.json("-", "/internal/webhooks/url-check", UrlProblem, {
      method: "POST",
      ...WebhooksHttpClient.body({ url }),
    });
    return body.problem;
  }

  create(userId: string, input: WebhookEndpointInput) {
    return this.client.json(userId, "/internal/webhooks", WebhookEndpointWithSecretDto, {
      method: "POST",
      ...WebhooksHttpClient.body(input),
    });
  }

  list(userId: string) {
    return this.client.json(userId, "/internal/webhooks", WebhookEndpointListDto);
  }

  get(userId: string, endpointId: string) {
    return this.client.json(
      userId,
      `/internal/webhooks/${encodeURIComponent(endpointId)}`,
      WebhookEndpointDto,
    );
  }

  update(userId: string, endpointId: string, change: WebhookEndpointChangeInput) {
    return this.client.json(
      userId,
      `/internal/webhooks/${encodeURIComponent(endpointId)}`,
      WebhookEndpointDto,
      {
        method: "PATCH",
        ...WebhooksHttpClient.body(change),
      },
    );
  }

  async delete(userId: string, endpointId: string): Promise<void> {
    await this.client.request(userId, `/internal/webhooks/${encodeURIComponent(endpointId)}`, {
      method: "DELETE",
    });
  }

  rotateSecret(userId: string, endpointId: string) {
    return this.client.json(
      userId,
      `/internal/webhooks/${encodeURIComponent(endpointId)}/rotate-secret`,
      WebhookEndpointWithSecretDto,
      { method: "POST" },
    );
  }

  deliveries(userId: string, endpointId: string, page: { limit: number; before?: string | undefined }) {
    const params = new URLSearchParams({ limit: String(page.limit) });
    if (page.before !== undefined) params.set("before", page.before);
    return this.client.json(
      userId,
      `/internal/webhooks/${encodeURIComponent(endpointId)}/deliveries?${params.toString()}`,
      WebhookDeliveryPageDto,
    );
  }

  redeliver(userId: string, endpointId: string, deliveryId: string) {
    return this.client.json(
      userId,
      `/internal/webhooks/${encodeURIComponent(endpointId)}/deliveries/${encodeURIComponent(deliveryId)}/redeliver`,
      WebhookDeliverySummaryDto,
      { method: "POST" },
    );
  }
}
