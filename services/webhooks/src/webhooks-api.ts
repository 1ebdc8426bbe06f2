import type {
  EventDto,
  EventPageDto,
  EventQuery,
  WebhookDeliveryPageDto,
  WebhookDeliverySummaryDto,
  WebhookEndpointChangeInput,
  WebhookEndpointDto,
  WebhookEndpointInput,
  WebhookEndpointWithSecretDto,
  WebhookSecretRotationInput,
} from "@locus/contracts";

/**
 * The webhooks service as the gateway uses it, in this process or over HTTP: every call as one
 * user, who sees only their own endpoints and events (another's id is "not found"). Inputs were validated by
 * the gateway; the service checks only what it alone can (the URL's addresses).
 */
export interface WebhooksApi {
  /** Why webhooks cannot go to this URL (its form, or the addresses its host resolves to), or null. */
  urlProblem(url: string): Promise<string | null>;
  create(userId: string, input: WebhookEndpointInput): Promise<WebhookEndpointWithSecretDto>;
  list(userId: string): Promise<WebhookEndpointDto[]>;
  get(userId: string, endpointId: string): Promise<WebhookEndpointDto>;
  update(userId: string, endpointId: string, change: WebhookEndpointChangeInput): Promise<WebhookEndpointDto>;
  delete(userId: string, endpointId: string): Promise<void>;
  /** A new secret; the replaced one keeps signing for the rotation's overlap (or the default). */
  rotateSecret(
    userId: string,
    endpointId: string,
    rotation?: WebhookSecretRotationInput,
  ): Promise<WebhookEndpointWithSecretDto>;
  deliveries(
    userId: string,
    endpointId: string,
    page: { limit: number; cursor?: string | undefined },
  ): Promise<WebhookDeliveryPageDto>;
  /** Sends a delivery again now (one more attempt); its id stays the same. */
  redeliver(userId: string, endpointId: string, deliveryId: string): Promise<WebhookDeliverySummaryDto>;
  /** The account's event log, newest first: every file event, told to an endpoint or not. */
  events(userId: string, query: EventQuery): Promise<EventPageDto>;
  event(userId: string, eventId: string): Promise<EventDto>;
}
