import type { Request } from "express";
import { Errors, type WebhookDeletedDto } from "@locus/contracts";
import type { WebhooksApi } from "@locus/webhooks";
import type { Principal } from "./authenticate.ts";
import { getEvent, listEvents } from "./operations/events.ts";
import { on, type Route } from "./operations/routes.ts";
import { RequestValidationError } from "./operations/rules.ts";
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhookDeliveries,
  listWebhooks,
  redeliverWebhook,
  rotateWebhookSecret,
  updateWebhook,
} from "./operations/webhooks.ts";
import { setNextLink } from "./paging.ts";
import { SandboxWebhooksApi } from "./sandbox-webhooks.ts";

/**
 * `/api/webhooks`: the caller's endpoints, their delivery log and redelivery; `/api/events`: the
 * event log. Live keys and dashboard sessions reach the webhooks service (here or over HTTP);
 * test keys the sandbox.
 */
export function webhookRoutes(live: WebhooksApi | undefined, baseUrl: (req: Request) => string): Route[] {
  const sandbox = new SandboxWebhooksApi();
  const apiFor = (principal: Principal): WebhooksApi => {
    if (principal.sandbox) return sandbox;
    if (!live) throw Errors.webhooksUnavailable();
    return live;
  };
  /** A URL the webhooks service refuses: said as a pydantic validator's ValueError on `url`. */
  const checkUrl = async (api: WebhooksApi, url: string) => {
    const problem = await api.urlProblem(url);
    if (problem) {
      const issue = { type: "value_error", loc: ["body", "url"], msg: `Value error, ${problem}`, input: url };
      throw new RequestValidationError([{ ...issue, ctx: { error: {} } }]);
    }
  };

  return [
    on(listWebhooks, async (_input, principal, _req, res) => {
      res.json(await apiFor(principal).list(principal.user.id));
    }),
    on(createWebhook, async ({ body }, principal, req, res) => {
      const api = apiFor(principal);
      await checkUrl(api, body.url);
      const created = await api.create(principal.user.id, body);
      res
        .status(201)
        .location(`${baseUrl(req)}/api/webhooks/${encodeURIComponent(created.id)}`)
        .json(created);
    }),
    on(getWebhook, async ({ endpoint_id }, principal, _req, res) => {
      res.json(await apiFor(principal).get(principal.user.id, endpoint_id));
    }),
    on(updateWebhook, async ({ endpoint_id, body }, principal, _req, res) => {
      const api = apiFor(principal);
      if (body.url !== undefined) await checkUrl(api, body.url);
      res.json(await api.update(principal.user.id, endpoint_id, body));
    }),
    on(deleteWebhook, async ({ endpoint_id }, principal, _req, res) => {
      await apiFor(principal).delete(principal.user.id, endpoint_id);
      res.json({
        message: "Webhook endpoint deleted",
        id: endpoint_id,
        ...(principal.sandbox ? { sandbox: true as const } : {}),
      } satisfies WebhookDeletedDto);
    }),
    on(rotateWebhookSecret, async ({ endpoint_id, body }, principal, _req, res) => {
      res.json(await apiFor(principal).rotateSecret(principal.user.id, endpoint_id, body));
    }),
    on(listWebhookDeliveries, async ({ endpoint_id, limit, cursor, before }, principal, req, res) => {
      const from = cursor ?? before;
      const page = from === undefined ? { limit } : { limit, cursor: from };
      const deliveries = await apiFor(principal).deliveries(principal.user.id, endpoint_id, page);
      setNextLink(listWebhookDeliveries, req, res, baseUrl(req), deliveries.next_cursor);
      res.json(deliveries);
    }),
    on(redeliverWebhook, async ({ endpoint_id, delivery_id }, principal, _req, res) => {
      res.status(202).json(await apiFor(principal).redeliver(principal.user.id, endpoint_id, delivery_id));
    }),
    on(listEvents, async ({ limit, cursor, filter }, principal, req, res) => {
      const query = { limit, ...(cursor === undefined ? {} : { cursor }), ...filter };
      const page = await apiFor(principal).events(principal.user.id, query);
      setNextLink(listEvents, req, res, baseUrl(req), page.next_cursor);
      res.json(page);
    }),
    on(getEvent, async ({ event_id }, principal, _req, res) => {
      res.json(await apiFor(principal).event(principal.user.id, event_id));
    }),
  ];
}
