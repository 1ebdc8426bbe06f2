import { randomUUID } from "node:crypto";
import {
  Errors,
  WEBHOOK_LIMITS,
  webhookUrlFormProblem,
  type EventDto,
  type EventPageDto,
  type EventQuery,
  type WebhookDeliveryPageDto,
  type WebhookDeliverySummaryDto,
  type WebhookEndpointChangeInput,
  type WebhookEndpointDto,
  type WebhookEndpointInput,
  type WebhookEndpointWithSecretDto,
  type WebhookSecretRotationInput,
} from "@locus/contracts";
import type {
  EventStore,
  StoredEvent,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookStore,
} from "@locus/metadata-store";
import { RefusedAddressError, type AddressGuard } from "./address-guard.ts";
import { newWebhookSecret, previousSecretSignsUntil } from "./signing.ts";
import type { WebhooksApi } from "./webhooks-api.ts";

/** An endpoint as its owner sees it now: never a secret. */
export function toEndpointDto(e: WebhookEndpoint): WebhookEndpointDto {
  return {
    id: e.id,
    url: e.url,
    description: e.description,
    events: e.events,
    enabled: e.disabledAt === null,
    disabled_at: e.disabledAt,
    disabled_reason: e.disabledReason,
    last_success_at: e.lastSuccessAt,
    previous_secret_expires_at: previousSecretSignsUntil(e, new Date()),
    created_at: e.createdAt,
    updated_at: e.updatedAt,
  };
}

export function toDeliverySummaryDto(d: WebhookDelivery): WebhookDeliverySummaryDto {
  return {
    id: d.id,
    event_id: d.eventId,
    event_type: d.eventType,
    status: d.status,
    attempts: d.attempts,
    max_attempts: d.maxAttempts,
    next_attempt_at: d.status === "pending" ? d.nextAttemptAt : null,
    last_status_code: d.lastStatusCode,
    last_error: d.lastError,
    created_at: d.createdAt,
    updated_at: d.updatedAt,
  };
}

/** An event as the log shows it: the body its deliveries carry, with their `webhook-id`. */
export function toEventDto(e: StoredEvent): EventDto {
  return { id: e.id, ...(JSON.parse(e.payload) as Omit<EventDto, "id">) };
}

/** The owner's side of webhooks: endpoints, their delivery log, redelivery, the event log. */
export class WebhooksService implements WebhooksApi {
  constructor(
    private readonly store: WebhookStore & EventStore,
    private readonly guard: AddressGuard,
    /** Seconds a replaced secret keeps signing when a rotation does not say (LOCUS_WEBHOOK_SECRET_OVERLAP_S). */
    private readonly secretOverlapS: number,
    /** Told when a delivery is due now (a redelivery), so it goes out without waiting for a poll. */
    private readonly wake: () => void = () => {},
  ) {}

  async urlProblem(url: string): Promise<string | null> {
    const form = webhookUrlFormProblem(url);
    if (form) return `The URL ${form}`;
    try {
      await this.guard.check(new URL(url));
      return null;
    } catch (error) {
      if (error instanceof RefusedAddressError) return `The URL is refused: ${error.message}`;
      throw error;
    }
  }

  async create(userId: string, input: WebhookEndpointInput): Promise<WebhookEndpointWithSecretDto> {
    const limit = WEBHOOK_LIMITS.endpointsPerAccount;
    if ((await this.store.listWebhookEndpoints(userId)).length >= limit) throw Errors.tooManyWebhooks(limit);
    const endpoint = await this.store.createWebhookEndpoint(
      { id: randomUUID(), userId, ...input, secret: newWebhookSecret() },
      new Date().toISOString(),
    );
    return { ...toEndpointDto(endpoint), secret: endpoint.secret };
  }

  async list(userId: string): Promise<WebhookEndpointDto[]> {
    return (await this.store.listWebhookEndpoints(userId)).map(toEndpointDto);
  }

  async get(userId: string, endpointId: string): Promise<WebhookEndpointDto> {
    return toEndpointDto(await this.endpoint(userId, endpointId));
  }

  async update(
    userId: string,
    endpointId: string,
    change: WebhookEndpointChangeInput,
  ): Promise<WebhookEndpointDto> {
    const at = new Date().toISOString();
    const { enabled, ...fields } = change;
    const updated = await this.store.updateWebhookEndpoint(
      userId,
      endpointId,
      { ...fields, ...(enabled === true ? { enable: true } : {}) },
      at,
    );
    if (!updated) throw Errors.webhookNotFound();
    if (enabled === false && updated.disabledAt === null) {
      await this.store.disableWebhookEndpoint(updated.id, "Disabled by its owner.", at, at);
      return toEndpointDto(await this.endpoint(userId, endpointId));
    }
    // Re-enabled: what was waiting for it goes out now.
    if (enabled === true) this.wake();
    return toEndpointDto(updated);
  }

  async delete(userId: string, endpointId: string): Promise<void> {
    if (!(await this.store.deleteWebhookEndpoint(userId, endpointId))) throw Errors.webhookNotFound();
  }

  async rotateSecret(
    userId: string,
    endpointId: string,
    rotation: WebhookSecretRotationInput = {},
  ): Promise<WebhookEndpointWithSecretDto> {
    const secret = newWebhookSecret();
    const now = Date.now();
    const overlapMs = (rotation.overlap_s ?? this.secretOverlapS) * 1000;
    const updated = await this.store.updateWebhookEndpoint(
      userId,
      endpointId,
      { secret, previousSecretExpiresAt: new Date(now + overlapMs).toISOString() },
      new Date(now).toISOString(),
    );
    if (!updated) throw Errors.webhookNotFound();
    return { ...toEndpointDto(updated), secret };
  }

  async deliveries(
    userId: string,
    endpointId: string,
    page: { limit: number; cursor?: string | undefined },
  ): Promise<WebhookDeliveryPageDto> {
    await this.endpoint(userId, endpointId);
    const { deliveries, nextCursor } = await this.store.listDeliveries(userId, endpointId, page);
    return {
      deliveries: deliveries.map((d) => ({
        ...toDeliverySummaryDto(d),
        payload: JSON.parse(d.payload) as Record<string, unknown>,
        attempt_log: d.attemptLog.map((a) => ({
          attempted_at: a.attemptedAt,
          status_code: a.statusCode,
          error: a.error,
          duration_ms: a.durationMs,
        })),
      })),
      next_cursor: nextCursor,
    };
  }

  async redeliver(
    userId: string,
    endpointId: string,
    deliveryId: string,
  ): Promise<WebhookDeliverySummaryDto> {
    const delivery = await this.store.redeliver(userId, endpointId, deliveryId, new Date().toISOString());
    if (!delivery) throw Errors.webhookDeliveryNotFound();
    this.wake();
    return toDeliverySummaryDto(delivery);
  }

  async events(userId: string, query: EventQuery): Promise<EventPageDto> {
    const { events, nextCursor } = await this.store.listEvents(userId, query);
    return { events: events.map(toEventDto), next_cursor: nextCursor };
  }

  async event(userId: string, eventId: string): Promise<EventDto> {
    const event = await this.store.getEvent(userId, eventId);
    if (!event) throw Errors.eventNotFound();
    return toEventDto(event);
  }

  private async endpoint(userId: string, endpointId: string): Promise<WebhookEndpoint> {
    const endpoint = await this.store.getWebhookEndpoint(userId, endpointId);
    if (!endpoint) throw Errors.webhookNotFound();
    return endpoint;
  }
}
