import express, { type Request, type RequestHandler, type Router } from "express";
import { Errors, type WebhookDeletedDto } from "@locus/contracts";
import { methodNotAllowed, RequestValidationError } from "@locus/http";
import type { WebhooksApi } from "@locus/webhooks";
import { principalOf, type Principal } from "./authenticate.ts";
import { SANDBOX_DELIVERY_ID, SANDBOX_WEBHOOK_ID, SandboxWebhooksApi } from "./sandbox-webhooks.ts";
import {
  parseDeliveriesQuery,
  parseIdParam,
  parseWebhookChange,
  parseWebhookCreate,
  refusedUrl,
} from "./webhook-validation.ts";

const BODY_LIMIT = "16kb";

/**
 * JSON bodies, whatever their Content-Type says (as FastAPI reads a body model); one that does
 * not parse is a `json_invalid` 422, as FastAPI answers.
 */
function jsonBody(): RequestHandler {
  const parse = express.json({ limit: BODY_LIMIT, type: () => true, strict: false });
  return (req, res, next) => {
    parse(req, res, (err?: unknown) => {
      if (!err) {
        next();
        return;
      }
      const type = (err as { type?: string }).type;
      if (type === "entity.too.large") {
        next(Errors.jsonBodyTooLarge(BODY_LIMIT));
        return;
      }
      // Anything else body-parser refuses (a body that does not parse, an unknown charset, a
      // malformed Content-Type) is a body that is not JSON: FastAPI says so the same way.
      if (typeof type === "string") {
        next(
          new RequestValidationError([
            {
              type: "json_invalid",
              loc: ["body", 0],
              msg: "JSON decode error",
              input: {},
              ctx: { error: "Expecting value" },
            },
          ]),
        );
        return;
      }
      next(err);
    });
  };
}

/**
 * `/api/webhooks`: the caller's endpoints, their delivery log and redelivery. Live keys and
 * dashboard sessions reach the webhooks service (here or over HTTP); test keys the sandbox.
 */
export function mountWebhookRoutes(
  app: Router,
  guard: RequestHandler[],
  live: WebhooksApi | undefined,
): void {
  const sandbox = new SandboxWebhooksApi();
  const apiFor = (principal: Principal): WebhooksApi => {
    if (principal.sandbox) return sandbox;
    if (!live) throw Errors.webhooksUnavailable();
    return live;
  };
  const endpointId = (req: Request, principal: Principal) => {
    const raw = String(req.params.endpoint_id ?? "");
    return principal.sandbox && raw === SANDBOX_WEBHOOK_ID ? raw : parseIdParam("endpoint_id", raw);
  };
  const deliveryId = (req: Request, principal: Principal) => {
    const raw = String(req.params.delivery_id ?? "");
    return principal.sandbox && raw === SANDBOX_DELIVERY_ID ? raw : parseIdParam("delivery_id", raw);
  };
  const checkUrl = async (api: WebhooksApi, url: string) => {
    const problem = await api.urlProblem(url);
    if (problem) throw refusedUrl(url, problem);
  };
  const json = jsonBody();

  app
    .route("/api/webhooks")
    .get(...guard, async (_req, res) => {
      const principal = principalOf(res);
      res.json(await apiFor(principal).list(principal.user.id));
    })
    .post(...guard, json, async (req, res) => {
      const principal = principalOf(res);
      const api = apiFor(principal);
      const input = parseWebhookCreate(req.body);
      await checkUrl(api, input.url);
      res.status(201).json(await api.create(principal.user.id, input));
    })
    .all(methodNotAllowed("GET, HEAD, POST"));

  app
    .route("/api/webhooks/:endpoint_id")
    .get(...guard, async (req, res) => {
      const principal = principalOf(res);
      res.json(await apiFor(principal).get(principal.user.id, endpointId(req, principal)));
    })
    .patch(...guard, json, async (req, res) => {
      const principal = principalOf(res);
      const api = apiFor(principal);
      const id = endpointId(req, principal);
      const change = parseWebhookChange(req.body);
      if (change.url !== undefined) await checkUrl(api, change.url);
      res.json(await api.update(principal.user.id, id, change));
    })
    .delete(...guard, async (req, res) => {
      const principal = principalOf(res);
      const id = endpointId(req, principal);
      await apiFor(principal).delete(principal.user.id, id);
      res.json({
        message: "Webhook endpoint deleted",
        id,
        ...(principal.sandbox ? { sandbox: true as const } : {}),
      } satisfies WebhookDeletedDto);
    })
    .all(methodNotAllowed("GET, HEAD, PATCH, DELETE"));

  app
    .route("/api/webhooks/:endpoint_id/rotate-secret")
    .post(...guard, async (req, res) => {
      const principal = principalOf(res);
      res.json(await apiFor(principal).rotateSecret(principal.user.id, endpointId(req, principal)));
    })
    .all(methodNotAllowed("POST"));

  app
    .route("/api/webhooks/:endpoint_id/deliveries")
    .get(...guard, async (req, res) => {
      const principal = principalOf(res);
      const id = endpointId(req, principal);
      const page = parseDeliveriesQuery(req.query);
      res.json(await apiFor(principal).deliveries(principal.user.id, id, page));
    })
    .all(methodNotAllowed("GET, HEAD"));

  app
    .route("/api/webhooks/:endpoint_id/deliveries/:delivery_id/redeliver")
    .post(...guard, async (req, res) => {
      const principal = principalOf(res);
      const id = endpointId(req, principal);
      const delivery = deliveryId(req, principal);
      res.status(202).json(await apiFor(principal).redeliver(principal.user.id, id, delivery));
    })
    .all(methodNotAllowed("POST"));
}
