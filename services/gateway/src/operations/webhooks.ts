/**
 * The webhooks API: its operations, each declared once (see operation.ts). Bodies are refused as
 * a FastAPI body model would refuse them (`url: str`, `events: list[Literal[...]]`, `description: str`).
 */
import {
  apiSchemaRef,
  FILE_EVENT_TYPES,
  WEBHOOK_LIMITS,
  type WebhookEndpointChangeInput,
  type WebhookEndpointInput,
  type WebhookSecretRotationInput,
} from "@locus/contracts";
import { SANDBOX_DELIVERY_ID, SANDBOX_WEBHOOK_ID } from "../sandbox-webhooks.ts";
import { errorResponse, nextLink, ok, operation, type JsonBody } from "./operation.ts";
import { booleanField, cursor, integer, integerField, literalListField, stringField, uuid } from "./rules.ts";

const WEBHOOKS_TEXT =
  "Extension. Locus POSTs `{type, timestamp, data: {file}}` (the file record as `GET /api/files/{file_id}` " +
  `returns it) to each enabled endpoint subscribed to the event (${FILE_EVENT_TYPES.map((t) => `\`${t}\``).join(", ")}), ` +
  "signed the Standard Webhooks way: headers `webhook-id` (the same on every attempt: deduplicate on it), " +
  '`webhook-timestamp` (Unix seconds) and `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">` ' +
  "with the endpoint's `whsec_` secret; any Standard Webhooks library verifies it. A 2xx answer within the " +
  "time limit is a success; anything else (a redirect too: they are not followed) is retried with growing " +
  "waits over about a day, then the delivery fails, and an endpoint with no success since that delivery " +
  "began is disabled (`enabled: false`, with `disabled_reason`; PATCH `enabled: true` to resume). What happens " +
  "while an endpoint is disabled (by that or by its owner) is held for it, `pending`, and sent once it is enabled " +
  "again, oldest first; held longer than the event log keeps events (30 days by default), a delivery fails. " +
  "Every event is in `GET /api/events` whether or not it was delivered. Receivers " +
  "on private, loopback or link-local addresses are refused unless the operator allows them.";

const notFound = errorResponse(
  "No such webhook endpoint (or delivery) for this key's user (another user's is reported the same way).",
);
const tooLarge = errorResponse("The JSON body is larger than 16 KB.");
const endpointId = {
  endpoint_id: uuid({
    description: "A webhook endpoint's UUID. With a test key, `whep_sandbox_example` is accepted too.",
    sandboxId: SANDBOX_WEBHOOK_ID,
  }),
};

const endpointFields = (eventsDescription?: string) => ({
  url: stringField({
    format: "uri",
    max: WEBHOOK_LIMITS.urlMaxLength,
    description: "An http or https URL without credentials, on an address webhooks may go to.",
  }),
  events: literalListField(FILE_EVENT_TYPES, {
    items: { $ref: apiSchemaRef("WebhookEventType") },
    description: eventsDescription,
  }),
  description: stringField({ max: WEBHOOK_LIMITS.descriptionMaxLength }),
});

const createBody: JsonBody<WebhookEndpointInput> = {
  fields: endpointFields("Default: every event."),
  required: ["url"],
  defaults: { events: [...FILE_EVENT_TYPES], description: "" },
};

const changeBody: JsonBody<WebhookEndpointChangeInput> = {
  fields: {
    ...endpointFields(),
    enabled: booleanField({ description: "`true` re-enables a disabled endpoint." }),
  },
  required: [],
};

export const listWebhooks = operation({
  method: "get",
  path: "/api/webhooks",
  operationId: "listWebhooks",
  summary: "List the caller's webhook endpoints",
  description: WEBHOOKS_TEXT,
  responses: { "200": ok("Endpoints, oldest first (never their secrets).", "WebhookEndpointList") },
});

export const createWebhook = operation({
  method: "post",
  path: "/api/webhooks",
  operationId: "createWebhook",
  summary: "Add a webhook endpoint",
  description: "The answer holds the endpoint's signing `secret`: it is shown this once.",
  body: createBody,
  responses: {
    "201": ok("The endpoint, with its secret.", "WebhookEndpointWithSecret", {
      Location: { schema: { type: "string" }, description: "The new endpoint's URL." },
    }),
    "409": errorResponse(`The account has ${WEBHOOK_LIMITS.endpointsPerAccount} endpoints already.`),
    "413": tooLarge,
  },
});

export const getWebhook = operation({
  method: "get",
  path: "/api/webhooks/{endpoint_id}",
  operationId: "getWebhook",
  summary: "Read one webhook endpoint",
  params: endpointId,
  responses: { "200": ok("The endpoint.", "WebhookEndpoint"), "404": notFound },
});

export const updateWebhook = operation({
  method: "patch",
  path: "/api/webhooks/{endpoint_id}",
  operationId: "updateWebhook",
  summary: "Change an endpoint's URL, events or description, or enable it again",
  params: endpointId,
  body: changeBody,
  responses: { "200": ok("The endpoint as it now is.", "WebhookEndpoint"), "404": notFound, "413": tooLarge },
});

export const deleteWebhook = operation({
  method: "delete",
  path: "/api/webhooks/{endpoint_id}",
  operationId: "deleteWebhook",
  summary: "Delete an endpoint and its delivery log",
  params: endpointId,
  responses: { "200": ok("Deleted.", "WebhookDeleted"), "404": notFound },
});

const rotationBody: JsonBody<WebhookSecretRotationInput> = {
  fields: {
    overlap_s: integerField({
      ge: 0,
      le: WEBHOOK_LIMITS.secretOverlapMaxS,
      description:
        "Seconds the replaced secret keeps signing too (0: it stops at once, as after a leak). Default: the " +
        "operator's LOCUS_WEBHOOK_SECRET_OVERLAP_S (a day).",
    }),
  },
  required: [],
  optional: true,
};

export const rotateWebhookSecret = operation({
  method: "post",
  path: "/api/webhooks/{endpoint_id}/rotate-secret",
  operationId: "rotateWebhookSecret",
  summary: "Replace an endpoint's signing secret",
  description:
    "Attempts from now on are signed with the new secret, shown this once, and, until " +
    "`previous_secret_expires_at`, with the replaced one too: `webhook-signature` then holds two " +
    "space-separated `v1,` signatures, and a receiver verifying with either secret accepts the delivery. " +
    "Rotating again before that drops the older secret. The body is optional.",
  params: endpointId,
  body: rotationBody,
  responses: {
    "200": ok("The endpoint, with its new secret.", "WebhookEndpointWithSecret"),
    "404": notFound,
  },
});

export const listWebhookDeliveries = operation({
  method: "get",
  path: "/api/webhooks/{endpoint_id}/deliveries",
  operationId: "listWebhookDeliveries",
  summary: "An endpoint's delivery log, newest first, with every attempt",
  params: endpointId,
  query: {
    limit: integer({
      ge: WEBHOOK_LIMITS.deliveriesLimitMin,
      le: WEBHOOK_LIMITS.deliveriesLimitMax,
      default: WEBHOOK_LIMITS.deliveriesLimitDefault,
    }),
    cursor: cursor(),
    before: cursor({
      description: "The name `cursor` had before the paging rule: the same.",
      deprecated: true,
    }),
  },
  responses: { "200": ok("A page of deliveries.", "WebhookDeliveryPage", nextLink), "404": notFound },
});

export const redeliverWebhook = operation({
  method: "post",
  path: "/api/webhooks/{endpoint_id}/deliveries/{delivery_id}/redeliver",
  operationId: "redeliverWebhook",
  summary: "Send a delivery again now",
  description:
    "One more attempt, now, with the same `webhook-id`. A delivery still being retried is only brought " +
    "forward. A redelivery that fails does not disable the endpoint.",
  params: { ...endpointId, delivery_id: uuid({ sandboxId: SANDBOX_DELIVERY_ID }) },
  responses: { "202": ok("Scheduled.", "WebhookDeliverySummary"), "404": notFound },
});

export const webhookOperations = [
  listWebhooks,
  createWebhook,
  getWebhook,
  updateWebhook,
  deleteWebhook,
  rotateWebhookSecret,
  listWebhookDeliveries,
  redeliverWebhook,
] as const;
