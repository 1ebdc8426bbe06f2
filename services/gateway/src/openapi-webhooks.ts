import { FILE_EVENT_TYPES, WEBHOOK_LIMITS, type ApiSchemaName } from "@locus/contracts";

/** What openapi.ts builds every operation's responses from. */
export interface OperationParts {
  json: (name: ApiSchemaName) => object;
  errorResponse: (description: string) => object;
  commonErrors: Record<string, object>;
  validationError: object;
}

const WEBHOOKS_TEXT =
  "Extension. Locus POSTs `{type, timestamp, data: {file}}` (the file record as `GET /api/files/{file_id}` " +
  `returns it) to each enabled endpoint subscribed to the event (${FILE_EVENT_TYPES.map((t) => `\`${t}\``).join(", ")}), ` +
  "signed the Standard Webhooks way: headers `webhook-id` (the same on every attempt: deduplicate on it), " +
  '`webhook-timestamp` (Unix seconds) and `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">` ' +
  "with the endpoint's `whsec_` secret; any Standard Webhooks library verifies it. A 2xx answer within the " +
  "time limit is a success; anything else (a redirect too: they are not followed) is retried with growing " +
  "waits over about a day, then the delivery fails, and an endpoint with no success since that delivery " +
  "began is disabled (`enabled: false`, with `disabled_reason`; PATCH `enabled: true` to resume). Receivers " +
  "on private, loopback or link-local addresses are refused unless the operator allows them.";

export function webhookPaths({ json, errorResponse, commonErrors, validationError }: OperationParts) {
  const notFound = errorResponse(
    "No such webhook endpoint (or delivery) for this key's user (another user's is reported the same way).",
  );
  const endpointIdParam = {
    name: "endpoint_id",
    in: "path",
    required: true,
    description: "A webhook endpoint's UUID. With a test key, `whep_sandbox_example` is accepted too.",
    schema: { type: "string", format: "uuid" },
  };
  const endpointBody = (required: string[]) => ({
    required: true,
    content: {
      "application/json": {
        schema: {
          type: "object",
          required,
          properties: {
            url: {
              type: "string",
              format: "uri",
              maxLength: WEBHOOK_LIMITS.urlMaxLength,
              description: "An http or https URL without credentials, on an address webhooks may go to.",
            },
            events: {
              type: "array",
              minItems: 1,
              items: { $ref: "#/components/schemas/WebhookEventType" },
              description: required.length > 0 ? "Default: every event." : undefined,
            },
            description: { type: "string", maxLength: WEBHOOK_LIMITS.descriptionMaxLength },
            ...(required.length > 0
              ? {}
              : { enabled: { type: "boolean", description: "`true` re-enables a disabled endpoint." } }),
          },
        },
      },
    },
  });
  return {
    "/api/webhooks": {
      get: {
        operationId: "listWebhooks",
        summary: "List the caller's webhook endpoints",
        description: WEBHOOKS_TEXT,
        responses: {
          "200": {
            description: "Endpoints, oldest first (never their secrets).",
            content: json("WebhookEndpointList"),
          },
          ...commonErrors,
        },
      },
      post: {
        operationId: "createWebhook",
        summary: "Add a webhook endpoint",
        description: "The answer holds the endpoint's signing `secret`: it is shown this once.",
        requestBody: endpointBody(["url"]),
        responses: {
          "201": {
            description: "The endpoint, with its secret.",
            content: json("WebhookEndpointWithSecret"),
          },
          ...commonErrors,
          "409": errorResponse(`The account has ${WEBHOOK_LIMITS.endpointsPerAccount} endpoints already.`),
          "413": errorResponse("The JSON body is larger than 16 KB."),
          "422": validationError,
        },
      },
    },
    "/api/webhooks/{endpoint_id}": {
      get: {
        operationId: "getWebhook",
        summary: "Read one webhook endpoint",
        parameters: [endpointIdParam],
        responses: {
          "200": { description: "The endpoint.", content: json("WebhookEndpoint") },
          ...commonErrors,
          "404": notFound,
          "422": validationError,
        },
      },
      patch: {
        operationId: "updateWebhook",
        summary: "Change an endpoint's URL, events or description, or enable it again",
        parameters: [endpointIdParam],
        requestBody: endpointBody([]),
        responses: {
          "200": { description: "The endpoint as it now is.", content: json("WebhookEndpoint") },
          ...commonErrors,
          "404": notFound,
          "413": errorResponse("The JSON body is larger than 16 KB."),
          "422": validationError,
        },
      },
      delete: {
        operationId: "deleteWebhook",
        summary: "Delete an endpoint and its delivery log",
        parameters: [endpointIdParam],
        responses: {
          "200": { description: "Deleted.", content: json("WebhookDeleted") },
          ...commonErrors,
          "404": notFound,
          "422": validationError,
        },
      },
    },
    "/api/webhooks/{endpoint_id}/rotate-secret": {
      post: {
        operationId: "rotateWebhookSecret",
        summary: "Replace an endpoint's signing secret",
        description: "Attempts from now on are signed with the new secret, shown this once.",
        parameters: [endpointIdParam],
        responses: {
          "200": {
            description: "The endpoint, with its new secret.",
            content: json("WebhookEndpointWithSecret"),
          },
          ...commonErrors,
          "404": notFound,
          "422": validationError,
        },
      },
    },
    "/api/webhooks/{endpoint_id}/deliveries": {
      get: {
        operationId: "listWebhookDeliveries",
        summary: "An endpoint's delivery log, newest first, with every attempt",
        parameters: [
          endpointIdParam,
          {
            name: "limit",
            in: "query",
            required: false,
            schema: {
              type: "integer",
              minimum: WEBHOOK_LIMITS.deliveriesLimitMin,
              maximum: WEBHOOK_LIMITS.deliveriesLimitMax,
              default: WEBHOOK_LIMITS.deliveriesLimitDefault,
            },
          },
          {
            name: "before",
            in: "query",
            required: false,
            description: "The previous page's `next_cursor`.",
            schema: { type: "string" },
          },
        ],
        responses: {
          "200": { description: "A page of deliveries.", content: json("WebhookDeliveryPage") },
          ...commonErrors,
          "404": notFound,
          "422": validationError,
        },
      },
    },
    "/api/webhooks/{endpoint_id}/deliveries/{delivery_id}/redeliver": {
      post: {
        operationId: "redeliverWebhook",
        summary: "Send a delivery again now",
        description:
          "One more attempt, now, with the same `webhook-id`. A delivery still being retried is only brought " +
          "forward. A redelivery that fails does not disable the endpoint.",
        parameters: [
          endpointIdParam,
          {
            name: "delivery_id",
            in: "path",
            required: true,
            schema: { type: "string", format: "uuid" },
          },
        ],
        responses: {
          "202": { description: "Scheduled.", content: json("WebhookDeliverySummary") },
          ...commonErrors,
          "404": notFound,
          "422": validationError,
        },
      },
    },
  };
}
