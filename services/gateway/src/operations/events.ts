/** The event log: its operations, each declared once (see operation.ts). */
import {
  apiSchemaRef,
  EVENT_LIMITS,
  FILE_EVENT_TYPES,
  type EventQuery,
  type FileEventType,
} from "@locus/contracts";
import { errorResponse, nextLink, ok, operation, type Group } from "./operation.ts";
import { cursor, enumList, instant, integer, uuid } from "./rules.ts";

const eventFilter: Group<Pick<EventQuery, "types" | "occurredAfter" | "occurredBefore">> = {
  rules: {
    type: enumList(FILE_EVENT_TYPES, {
      description: "Only events of these types; repeat for several.",
      items: { $ref: apiSchemaRef("WebhookEventType") },
    }),
    occurred_after: instant({
      description:
        "Only events strictly after this instant (ISO 8601; a date is its midnight UTC, no offset means UTC).",
    }),
    occurred_before: instant({
      description: "Only events strictly before this instant (as `occurred_after`).",
    }),
  },
  build: (v) => ({
    ...(v.type ? { types: [...new Set(v.type as FileEventType[])] } : {}),
    ...(v.occurred_after ? { occurredAfter: v.occurred_after as string } : {}),
    ...(v.occurred_before ? { occurredBefore: v.occurred_before as string } : {}),
  }),
};

export const listEvents = operation({
  method: "get",
  path: "/api/events",
  operationId: "listEvents",
  summary: "The account's event log, newest first",
  description:
    "Extension. Every `file.ready`, `file.failed` and `file.deleted` of the account's files, whether or not " +
    "a webhook endpoint was told of it, kept for `LOCUS_WEBHOOK_RETENTION_DAYS` (30 by default): a consumer " +
    "whose receiver was down or whose endpoint was disabled catches up here. Each event is the body its " +
    "webhook deliveries carry, with their `webhook-id` as `id`. Filters (`type`, `occurred_after`, " +
    "`occurred_before`) all hold at once; pages by `limit` and `cursor`.",
  query: {
    limit: integer({
      ge: EVENT_LIMITS.limitMin,
      le: EVENT_LIMITS.limitMax,
      default: EVENT_LIMITS.limitDefault,
    }),
    cursor: cursor(),
  },
  filter: eventFilter,
  responses: { "200": ok("A page of events.", "EventPage", nextLink) },
});

export const getEvent = operation({
  method: "get",
  path: "/api/events/{event_id}",
  operationId: "getEvent",
  summary: "Read one event",
  params: {
    event_id: uuid({ description: "An event's UUID (a delivery's `event_id`, its `webhook-id`)." }),
  },
  responses: {
    "200": ok("The event.", "Event"),
    "404": errorResponse(
      "No such event for this key's user (another user's, or one older than the log keeps, is reported the same way).",
    ),
  },
});

export const eventOperations = [listEvents, getEvent] as const;
