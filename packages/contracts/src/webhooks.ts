import { z } from "zod";
import { FileEventType } from "./messages.ts";
import { NEXT_CURSOR_TEXT } from "./paging.ts";

/**
 * The webhooks API (`/api/webhooks`): endpoints per account, their deliveries and attempts. Each
 * delivery is a POST of `{type, timestamp, data: {file}}` signed the Standard Webhooks way
 * (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256>` with the
 * endpoint's `whsec_` secret).
 */
const timestamp = z.iso.datetime({ offset: true });
const sandbox = z.literal(true).optional();

export const WEBHOOK_LIMITS = {
  /** Endpoints per account: each event is sent to every one, so they are few. */
  endpointsPerAccount: 20,
  urlMaxLength: 2048,
  descriptionMaxLength: 500,
  deliveriesLimitMin: 1,
  deliveriesLimitMax: 100,
  deliveriesLimitDefault: 20,
  /** How long a replaced secret keeps signing after a rotation unless told otherwise: a day. */
  secretOverlapDefaultS: 86_400,
  /** The longest a replaced secret may keep signing after a rotation: a week. */
  secretOverlapMaxS: 7 * 86_400,
} as const;

/**
 * Why this URL can never be a webhook receiver (its scheme, credentials in it), or null when its
 * form is fine: the check every webhooks API makes before anything else, the sandbox's included.
 * Where the host may point (the SSRF rules) is the webhooks service's AddressGuard.
 */
export function webhookUrlFormProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "must be an absolute http or https URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "must be an http or https URL";
  if (url.username || url.password) return "must not carry a user name or password";
  if (!url.hostname) return "must name a host";
  return null;
}

export const WebhookEventType = FileEventType.describe(
  "`file.ready`: a file was processed and can be searched; `file.failed`: it could not be (see its `error`); " +
    "`file.deleted`: it was deleted (the record as it was).",
);

/** An endpoint as its owner sees it: never its secret, which is shown once. */
export const WebhookEndpointDto = z.object({
  id: z.string().describe("UUID; `whep_sandbox_example` for test keys."),
  url: z.string(),
  description: z.string(),
  events: z.array(WebhookEventType).min(1),
  enabled: z
    .boolean()
    .describe("False once disabled after persistent failure (or by its owner); PATCH `enabled: true`."),
  disabled_at: timestamp.nullable(),
  disabled_reason: z.string().nullable().describe("Why it was disabled: the failures that led to it."),
  last_success_at: timestamp.nullable(),
  previous_secret_expires_at: timestamp
    .nullable()
    .describe(
      "After a rotation, until this time every delivery is also signed with the replaced secret (a second " +
        "`v1,` signature), so receivers can switch over; null when only the current secret signs.",
    ),
  created_at: timestamp,
  updated_at: timestamp,
  sandbox,
});
export type WebhookEndpointDto = z.infer<typeof WebhookEndpointDto>;

/** `POST /api/webhooks` and `.../rotate-secret`: the endpoint with its signing secret, shown this once. */
export const WebhookEndpointWithSecretDto = WebhookEndpointDto.extend({
  secret: z
    .string()
    .describe(
      "`whsec_` and a base64 key: verifies `webhook-signature` (any Standard Webhooks library). Shown once.",
    ),
});
export type WebhookEndpointWithSecretDto = z.infer<typeof WebhookEndpointWithSecretDto>;

export const WebhookEndpointListDto = z.array(WebhookEndpointDto);
export type WebhookEndpointListDto = z.infer<typeof WebhookEndpointListDto>;

export const WebhookAttemptDto = z.object({
  attempted_at: timestamp,
  status_code: z.number().int().nullable().describe("The receiver's HTTP status; null when none came."),
  error: z.string().nullable().describe("Why the attempt failed; null when it succeeded."),
  duration_ms: z.number().int().min(0),
});
export type WebhookAttemptDto = z.infer<typeof WebhookAttemptDto>;

export const WebhookDeliveryStatus = z.enum(["pending", "succeeded", "failed"]);

/** One event owed to one endpoint. */
export const WebhookDeliverySummaryDto = z.object({
  id: z.string(),
  event_id: z.string().describe("The `webhook-id` header: the same on every attempt and redelivery."),
  event_type: WebhookEventType,
  status: WebhookDeliveryStatus.describe(
    "`pending` while attempts remain (see `next_attempt_at`), `succeeded` on a 2xx, `failed` when every attempt failed.",
  ),
  attempts: z.number().int().min(0),
  max_attempts: z.number().int().min(1),
  next_attempt_at: timestamp.nullable(),
  last_status_code: z.number().int().nullable(),
  last_error: z.string().nullable(),
  created_at: timestamp,
  updated_at: timestamp,
  sandbox,
});
export type WebhookDeliverySummaryDto = z.infer<typeof WebhookDeliverySummaryDto>;

export const WebhookDeliveryDto = WebhookDeliverySummaryDto.extend({
  payload: z.record(z.string(), z.unknown()).describe("The body sent: `{type, timestamp, data: {file}}`."),
  attempt_log: z.array(WebhookAttemptDto).describe("Every attempt, oldest first."),
});
export type WebhookDeliveryDto = z.infer<typeof WebhookDeliveryDto>;

/** `GET /api/webhooks/{id}/deliveries`: newest first. */
export const WebhookDeliveryPageDto = z.object({
  deliveries: z.array(WebhookDeliveryDto),
  next_cursor: z.string().nullable().describe(NEXT_CURSOR_TEXT),
  sandbox,
});
export type WebhookDeliveryPageDto = z.infer<typeof WebhookDeliveryPageDto>;

export const WebhookDeletedDto = z.object({ message: z.string(), id: z.string(), sandbox });
export type WebhookDeletedDto = z.infer<typeof WebhookDeletedDto>;

/** What a request may set on an endpoint, validated by the gateway first (FastAPI-style 422s). */
export interface WebhookEndpointInput {
  url: string;
  events: FileEventType[];
  description: string;
}

export interface WebhookSecretRotationInput {
  /** Seconds the replaced secret keeps signing too (0: it stops now); the operator's default when absent. */
  overlap_s?: number;
}

export interface WebhookEndpointChangeInput {
  url?: string;
  events?: FileEventType[];
  description?: string;
  enabled?: boolean;
}
