import {
  Errors,
  WEBHOOK_LIMITS,
  type EventDto,
  type EventPageDto,
  type EventQuery,
  webhookUrlFormProblem,
  type WebhookDeliveryPageDto,
  type WebhookDeliverySummaryDto,
  type WebhookEndpointChangeInput,
  type WebhookEndpointDto,
  type WebhookEndpointInput,
  type WebhookEndpointWithSecretDto,
  type WebhookSecretRotationInput,
} from "@locus/contracts";
import type { WebhooksApi } from "@locus/webhooks";
import { sandboxFile } from "./sandbox.ts";

/**
 * The webhooks API of test keys: answers shaped like live ones, marked `sandbox: true`, built from
 * the request alone. Nothing is stored and nothing is ever sent.
 */
export const SANDBOX_WEBHOOK_ID = "whep_sandbox_example";
const SANDBOX_DELIVERY_ID = "whdl_sandbox_example";
/** The one event of a test key's log, which its example delivery carries. */
const SANDBOX_EVENT_ID = "00000000-0000-4000-8000-000000000000";
const EPOCH = "2026-01-01T00:00:00.000Z";
/** Not a secret: the same for every test key, and nothing is signed with it. */
const SANDBOX_SECRET = "whsec_c2FuZGJveC1vbmx5LW5vdC1hLXJlYWwtc2VjcmV0";

function sandboxEndpoint(overrides: Partial<WebhookEndpointDto> = {}): WebhookEndpointDto {
  return {
    id: SANDBOX_WEBHOOK_ID,
    url: "https://example.com/locus-webhooks",
    description: "Sandbox example endpoint",
    events: ["file.ready", "file.failed", "file.deleted"],
    enabled: true,
    disabled_at: null,
    disabled_reason: null,
    last_success_at: EPOCH,
    previous_secret_expires_at: null,
    created_at: EPOCH,
    updated_at: EPOCH,
    ...overrides,
    sandbox: true,
  };
}

function sandboxDelivery(): WebhookDeliverySummaryDto {
  return {
    id: SANDBOX_DELIVERY_ID,
    event_id: SANDBOX_EVENT_ID,
    event_type: "file.ready",
    status: "succeeded",
    attempts: 1,
    max_attempts: 8,
    next_attempt_at: null,
    last_status_code: 200,
    last_error: null,
    created_at: EPOCH,
    updated_at: EPOCH,
    sandbox: true,
  };
}

function sandboxEvent(): EventDto {
  return {
    id: SANDBOX_EVENT_ID,
    type: "file.ready",
    timestamp: EPOCH,
    data: { file: sandboxFile() },
    sandbox: true,
  };
}

export class SandboxWebhooksApi implements WebhooksApi {
  /** Only the URL's form: a test key never causes a DNS lookup or a request. */
  urlProblem(url: string): Promise<string | null> {
    const problem = webhookUrlFormProblem(url);
    return Promise.resolve(problem ? `The URL ${problem}` : null);
  }

  create(_userId: string, input: WebhookEndpointInput): Promise<WebhookEndpointWithSecretDto> {
    return Promise.resolve({ ...sandboxEndpoint(input), secret: SANDBOX_SECRET, sandbox: true });
  }

  list(): Promise<WebhookEndpointDto[]> {
    return Promise.resolve([sandboxEndpoint()]);
  }

  get(_userId: string, endpointId: string): Promise<WebhookEndpointDto> {
    return Promise.resolve(sandboxEndpoint({ id: endpointId }));
  }

  update(
    _userId: string,
    endpointId: string,
    change: WebhookEndpointChangeInput,
  ): Promise<WebhookEndpointDto> {
    return Promise.resolve(sandboxEndpoint({ ...change, id: endpointId, enabled: change.enabled ?? true }));
  }

  async delete(): Promise<void> {}

  /** The overlap the request asked for, from now (the setting's default when it says none). */
  rotateSecret(
    _userId: string,
    endpointId: string,
    rotation: WebhookSecretRotationInput = {},
  ): Promise<WebhookEndpointWithSecretDto> {
    const overlapS = rotation.overlap_s ?? WEBHOOK_LIMITS.secretOverlapDefaultS;
    const expires = overlapS > 0 ? new Date(Date.now() + overlapS * 1000).toISOString() : null;
    return Promise.resolve({
      ...sandboxEndpoint({ id: endpointId, previous_secret_expires_at: expires }),
      secret: SANDBOX_SECRET,
      sandbox: true,
    });
  }

  deliveries(): Promise<WebhookDeliveryPageDto> {
    const { id: _id, sandbox: _sandbox, ...payload } = sandboxEvent();
    return Promise.resolve({
      deliveries: [
        {
          ...sandboxDelivery(),
          payload,
          attempt_log: [{ attempted_at: EPOCH, status_code: 200, error: null, duration_ms: 42 }],
        },
      ],
      next_cursor: null,
      sandbox: true,
    });
  }

  redeliver(_userId: string, _endpointId: string, deliveryId: string): Promise<WebhookDeliverySummaryDto> {
    if (deliveryId !== SANDBOX_DELIVERY_ID) return Promise.reject(Errors.webhookDeliveryNotFound());
    return Promise.resolve({
      ...sandboxDelivery(),
      status: "pending",
      next_attempt_at: EPOCH,
      sandbox: true,
    });
  }

  /** The example event, when it passes the query's filters. */
  events(_userId: string, query: EventQuery): Promise<EventPageDto> {
    const event = sandboxEvent();
    const passes =
      (query.types?.includes(event.type) ?? true) &&
      (query.occurredAfter === undefined || event.timestamp > query.occurredAfter) &&
      (query.occurredBefore === undefined || event.timestamp < query.occurredBefore) &&
      query.cursor === undefined;
    return Promise.resolve({ events: passes ? [event] : [], next_cursor: null, sandbox: true });
  }

  event(_userId: string, eventId: string): Promise<EventDto> {
    if (eventId !== SANDBOX_EVENT_ID) return Promise.reject(Errors.eventNotFound());
    return Promise.resolve(sandboxEvent());
  }
}

export { SANDBOX_DELIVERY_ID };
