import { randomUUID } from "node:crypto";
import { CONSUMER_GROUPS, type FileEvent } from "@locus/contracts";
import type { Bus } from "@locus/bus";
import type { WebhookStore } from "@locus/metadata-store";

/**
 * The body every endpoint receives for an event, in Standard Webhooks' recommended shape
 * (`type`, `timestamp`, `data`); `data.file` is the file record as the API shows it.
 */
export function webhookPayload(event: FileEvent): string {
  return JSON.stringify({ type: event.type, timestamp: event.occurredAt, data: { file: event.file } });
}

/**
 * Turns each file event into one delivery per enabled endpoint of its account that wants it,
 * recorded before the message is acknowledged. A redelivered event is owed once per endpoint (the
 * store's unique event id per endpoint), so a crash between two inserts is harmless.
 */
export async function subscribeFileEvents(
  bus: Bus,
  store: WebhookStore,
  maxAttempts: number,
  enqueued: () => void,
): Promise<void> {
  await bus.subscribe(
    { group: "webhooks", topics: CONSUMER_GROUPS.webhooks, concurrency: 4, maxAttempts: 5 },
    async ({ message: event }) => {
      const endpoints = await store.endpointsFor(event.userId, event.type);
      if (endpoints.length === 0) return;
      const payload = webhookPayload(event);
      const createdAt = new Date().toISOString();
      for (const endpoint of endpoints) {
        await store.enqueueDelivery({
          id: randomUUID(),
          endpointId: endpoint.id,
          userId: event.userId,
          eventId: event.id,
          eventType: event.type,
          payload,
          maxAttempts,
          createdAt,
        });
      }
      enqueued();
    },
  );
}
