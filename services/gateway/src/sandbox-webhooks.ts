import {
  Errors,
  webhookUrlFormProblem,
  type WebhookDeliveryPageDto,
  type WebhookDeliverySummaryDto,
  type WebhookEndpointChangeInput,
  type WebhookEndpointDto,
  type WebhookEndpointInput,
  type WebhookEndpointWithSecretDto,
} from "@locus/contracts";
import type { WebhooksApi } from "@locus/webhooks";

/**
 * The webhooks API of test keys: answers shaped like live ones, marked `sandbox: true`, built from
 * the request alone. Nothing is stored and nothing is ever sent.
 */
export const SANDBOX_WEBHOOK_ID = "whep_sandbox_example";
const SANDBOX_DELIVERY_ID = "whdl_sandbox_example";
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
    created_at: EPOCH,
    updated_at: EPOCH,
    ...overrides,
    sandbox: true,
  };
}

function sandboxDelivery(): WebhookDeliverySummaryDto {
  return {
    id: SANDBOX_DELIVERY_ID,
    event_id: "00000000-0000-4000-8000-000000000000",
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

  rotateSecret(_userId: string, endpointId: string): Promise<WebhookEndpointWithSecretDto> {
    return Promise.resolve({ ...sandboxEndpoint({ id: endpointId }), secret: SANDBOX_SECRET, sandbox: true });
  }

  deliveries(): Promise<WebhookDeliveryPageDto> {
    const file = { id: "file_sandbox_example", status: "ready" };
    return Promise.resolve({
      deliveries: [
        {
          ...sandboxDelivery(),
          payload: { type: "file.ready", timestamp: EPOCH, data: { file } },
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
}

export { SANDBOX_DELIVERY_ID };
