import type { Router } from "express";
import { z } from "zod";
import {
  EventDto,
  EventPageDto,
  EventQuery,
  FileEventType,
  WebhookDeliveryPageDto,
  WebhookDeliverySummaryDto,
  WebhookEndpointDto,
  WebhookEndpointListDto,
  WebhookEndpointWithSecretDto,
} from "@locus/contracts";
import { internalService, wire, type ServiceIdentity } from "@locus/http";
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

/**
 * The webhooks process's internal interface: the gateway authenticates the caller, then calls here
 * as the user its service token names. Never exposed publicly.
 */
const internal = internalService<WebhooksApi>("webhooks", (op) => ({
  urlProblem: op({
    method: "POST",
    path: "/internal/webhooks/url-check",
    body: z.object({ url: z.string() }),
    answer: z.object({ problem: z.string().nullable() }),
    // The user is not needed to check a URL, but every internal call names one: none here.
    send: (url) => ({ user: "-", body: { url } }),
    serve: async (webhooks, { body }) => ({ problem: await webhooks.urlProblem(body.url) }),
    read: ({ problem }) => problem,
  }),
  create: op({
    method: "POST",
    path: "/internal/webhooks",
    body: EndpointInput,
    status: 201,
    answer: WebhookEndpointWithSecretDto,
    send: (userId, input) => ({ user: userId, body: input }),
    serve: (webhooks, { user, body }) => webhooks.create(user, body),
  }),
  list: op({
    method: "GET",
    path: "/internal/webhooks",
    answer: WebhookEndpointListDto,
    send: (userId) => ({ user: userId }),
    serve: (webhooks, { user }) => webhooks.list(user),
  }),
  get: op({
    method: "GET",
    path: "/internal/webhooks/:id",
    answer: WebhookEndpointDto,
    send: (userId, id) => ({ user: userId, params: { id } }),
    serve: (webhooks, { user, params }) => webhooks.get(user, params.id),
  }),
  update: op({
    method: "PATCH",
    path: "/internal/webhooks/:id",
    body: EndpointChange,
    answer: WebhookEndpointDto,
    send: (userId, id, change) => ({ user: userId, params: { id }, body: change }),
    serve: (webhooks, { user, params, body }) => webhooks.update(user, params.id, body),
  }),
  delete: op({
    method: "DELETE",
    path: "/internal/webhooks/:id",
    send: (userId, id) => ({ user: userId, params: { id } }),
    serve: (webhooks, { user, params }) => webhooks.delete(user, params.id),
  }),
  rotateSecret: op({
    method: "POST",
    path: "/internal/webhooks/:id/rotate-secret",
    body: z.object({ overlap_s: z.number().int().min(0).optional() }),
    answer: WebhookEndpointWithSecretDto,
    send: (userId, id, rotation) => ({ user: userId, params: { id }, body: rotation ?? {} }),
    serve: (webhooks, { user, params, body }) => webhooks.rotateSecret(user, params.id, body),
  }),
  deliveries: op({
    method: "GET",
    path: "/internal/webhooks/:id/deliveries",
    query: z.object({ limit: wire.int.default(20), cursor: z.string().optional() }),
    answer: WebhookDeliveryPageDto,
    send: (userId, id, page) => ({ user: userId, params: { id }, query: page }),
    serve: (webhooks, { user, params, query }) => webhooks.deliveries(user, params.id, query),
  }),
  redeliver: op({
    method: "POST",
    path: "/internal/webhooks/:id/deliveries/:delivery/redeliver",
    answer: WebhookDeliverySummaryDto,
    send: (userId, id, delivery) => ({ user: userId, params: { id, delivery } }),
    serve: (webhooks, { user, params }) => webhooks.redeliver(user, params.id, params.delivery),
  }),
  events: op({
    method: "GET",
    path: "/internal/events",
    query: z.object({ query: wire.json(EventQuery, "base64url") }),
    answer: EventPageDto,
    send: (userId, query) => ({ user: userId, query: { query } }),
    serve: (webhooks, { user, query }) => webhooks.events(user, query.query),
  }),
  event: op({
    method: "GET",
    path: "/internal/events/:id",
    answer: EventDto,
    send: (userId, id) => ({ user: userId, params: { id } }),
    serve: (webhooks, { user, params }) => webhooks.event(user, params.id),
  }),
}));

export const webhooksInternalRouter = (webhooks: WebhooksApi, identity: ServiceIdentity): Router =>
  internal.router(identity, webhooks);

/** WebhooksApi over HTTP, for a gateway that runs apart from the webhooks service. */
export class WebhooksHttpClient extends internal.Client implements WebhooksApi {}
