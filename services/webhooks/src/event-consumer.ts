import { randomUUID } from "node:crypto";
import { CONSUMER_GROUPS, type FileEvent } from "@locus/contracts";
import type { Bus } from "@locus/bus";
import type { EventStore, WebhookStore } from "@locus/metadata-store";

/**
 * The body every endpoint receives for an event, in Standard Webhooks' recommended shape
 * (`type`, `timestamp`, `data`); `data.file` is the file record as the API shows it.
 */
export function webhookPayload(event: FileEvent): string {
  return JSON.stringify({ type: event.type, timestamp: event.occurredAt, data: { file: event.file } });
}

/**
 * Keeps each file event in its account's event log, then turns it into one delivery per endpoint
 * of the account that wants it, all recorded before the message is acknowledged. A disabled
 * endpoint is owed its deliveries too: they are held until it is enabled. A redelivered event is
 * kept and owed once (the store's unique event id, per endpoint for deliveries), so a crash
 * between two inserts is harmless.
 */
export async function subscribeFileEvents(
  bus: Bus,
  store: WebhookStore & EventStore,
  maxAttempts: number,
  enqueued: () => void,
): Promise<void> {
  await bus.subscribe(
    { group: "webhooks", topics: CONSUMER_GROUPS.webhooks, concurrency: 4, maxAttempts: 5 },
    async ({ message: event }) => {
      const payload = webhookPayload(event);
      await store.recordEvent({
        id: event.id,
        userId: event.userId,
        type: event.type,
        occurredAt: event.occurredAt,
        payload,
      });
      const endpoints = await store.endpointsFor(event.userId, event.type);
      if (endpoints.length === 0) return;
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
