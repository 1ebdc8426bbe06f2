export {
  AddressGuard,
  addressKind,
  RefusedAddressError,
  type AddressKind,
  type Resolver,
} from "./address-guard.ts";
export { DeliveryWorker, type DeliveryObserver } from "./delivery-worker.ts";
export { webhookPayload } from "./event-consumer.ts";
export { RetrySchedule } from "./retry-schedule.ts";
export { newWebhookSecret, signWebhook, verifyWebhook, webhookHeaders } from "./signing.ts";
export type { WebhooksApi } from "./webhooks-api.ts";
export { WebhooksHttpClient, webhooksInternalRouter } from "./webhooks-http.ts";
export { startWebhooksModule, type WebhooksModule, type WebhooksModuleDeps } from "./webhooks-module.ts";
export { WebhookSender, type SendResult } from "./webhook-sender.ts";
export { WebhooksService } from "./webhooks-service.ts";
