import { sql, type Kysely, type Selectable } from "kysely";
import { keysetCursor, type EventQuery, type FileEventType } from "@locus/contracts";
import type { EventPage, EventStore, StoredEvent } from "./event-store.ts";
import { afterCursor } from "./keyset.ts";
import type { Database, EventsTable } from "./schema.ts";

const toEvent = (r: Selectable<EventsTable>): StoredEvent => ({
  id: r.id,
  userId: r.user_id,
  type: r.type as FileEventType,
  occurredAt: r.occurred_at,
  payload: r.payload,
});

/** The event log over the shared Kysely database, in any dialect. */
export class KyselyEventStore implements EventStore {
  constructor(private readonly db: Kysely<Database>) {}

  async recordEvent(event: StoredEvent): Promise<boolean> {
    // Inserted only while its user exists, in one statement: an event that arrives after its
    // account was deleted has no one to be kept for (and would break the foreign key).
    const text = (value: string) => sql<string>`cast(${value} as text)`;
    const result = await this.db
      .insertInto("events")
      .columns(["id", "user_id", "type", "occurred_at", "payload"])
      .expression(
        this.db
          .selectFrom("users")
          .select([
            text(event.id).as("id"),
            "users.id as user_id",
            text(event.type).as("type"),
            // One form for every time kept, so the log sorts and compares them as text.
            text(new Date(event.occurredAt).toISOString()).as("occurred_at"),
            text(event.payload).as("payload"),
          ])
          .where("users.id", "=", event.userId),
      )
      .onConflict((oc) => oc.column("id").doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  async listEvents(userId: string, query: EventQuery): Promise<EventPage> {
    let select = this.db.selectFrom("events").selectAll().where("user_id", "=", userId);
    if (query.types !== undefined) select = select.where("type", "in", query.types);
    if (query.occurredAfter !== undefined) select = select.where("occurred_at", ">", query.occurredAfter);
    if (query.occurredBefore !== undefined) select = select.where("occurred_at", "<", query.occurredBefore);
    if (query.cursor !== undefined) select = select.where(afterCursor(query.cursor, "occurred_at"));
    const rows = await select
      .orderBy("occurred_at", "desc")
      .orderBy("id", "desc")
      .limit(query.limit + 1)
      .execute();
    const events = rows.slice(0, query.limit).map(toEvent);
    const last = events.at(-1);
    return {
      events,
      nextCursor:
        rows.length > query.limit && last ? keysetCursor({ at: last.occurredAt, id: last.id }) : null,
    };
  }

  async getEvent(userId: string, eventId: string): Promise<StoredEvent | null> {
    const row = await this.db
      .selectFrom("events")
      .selectAll()
      .where("id", "=", eventId)
      .where("user_id", "=", userId)
      .executeTakeFirst();
    return row ? toEvent(row) : null;
  }

  async pruneEvents(before: string, limit: number): Promise<number> {
    const old = await this.db
      .selectFrom("events")
      .select("id")
      .where("occurred_at", "<", before)
      .limit(limit)
      .execute();
    if (old.length === 0) return 0;
    const result = await this.db
      .deleteFrom("events")
      .where(
        "id",
        "in",
        old.map((e) => e.id),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
