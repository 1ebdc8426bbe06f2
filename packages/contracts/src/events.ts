import { z } from "zod";
import { FileRecordDto } from "./files.ts";
import { NEXT_CURSOR_TEXT } from "./paging.ts";
import { WebhookEventType } from "./webhooks.ts";

/**
 * The event log (`GET /api/events`): every file event of an account, whether or not a webhook
 * endpoint wanted it, kept for LOCUS_WEBHOOK_RETENTION_DAYS, so a consumer that missed deliveries
 * (its receiver was down, its endpoint disabled) can always catch up. Each event is the body its
 * webhook deliveries carry, with the id they carry as `webhook-id`.
 */
const timestamp = z.iso.datetime({ offset: true });

export const EVENT_LIMITS = { limitMin: 1, limitMax: 100, limitDefault: 20 } as const;

export const EventDto = z.object({
  id: z.string().describe("The event's id: the `webhook-id` header of every delivery of it."),
  type: WebhookEventType,
  timestamp: timestamp.describe("When the change to the file was recorded."),
  data: z.object({
    file: FileRecordDto.describe("The file record as it was then (for `file.deleted`, before the delete)."),
  }),
  sandbox: z.literal(true).optional(),
});
export type EventDto = z.infer<typeof EventDto>;

/** `GET /api/events`: newest first. */
export const EventPageDto = z.object({
  events: z.array(EventDto),
  next_cursor: z.string().nullable().describe(NEXT_CURSOR_TEXT),
  sandbox: z.literal(true).optional(),
});
export type EventPageDto = z.infer<typeof EventPageDto>;

/** Which events a page of the log holds (the gateway has checked each): all hold at once. */
export const EventQuery = z.object({
  limit: z.number().int().min(EVENT_LIMITS.limitMin).max(EVENT_LIMITS.limitMax),
  cursor: z.string().optional(),
  types: z.array(WebhookEventType).optional(),
  /** Strictly after this instant (ISO 8601, UTC). */
  occurredAfter: timestamp.optional(),
  /** Strictly before this instant. */
  occurredBefore: timestamp.optional(),
});
export type EventQuery = z.infer<typeof EventQuery>;
