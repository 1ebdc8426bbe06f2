import type { Kysely, Selectable } from "kysely";
import type { NewOutboxEntry, OutboxEntry, OutboxStore } from "./outbox-store.ts";
import type { Database, OutboxTable } from "./schema.ts";

const toEntry = (r: Selectable<OutboxTable>): OutboxEntry => ({
  id: r.id,
  topic: r.topic,
  message: JSON.parse(r.message) as unknown,
  fileId: r.file_id,
  availableAt: r.available_at,
  attempts: r.attempts,
  createdAt: r.created_at,
});

/** Writes outbox entries within the caller's transaction (see FileStore.createFile). */
export async function insertOutboxEntries(
  db: Kysely<Database>,
  entries: readonly NewOutboxEntry[],
  createdAt: string,
): Promise<void> {
  if (entries.length === 0) return;
  await db
    .insertInto("outbox")
    .values(
      entries.map((e) => ({
        id: e.id,
        topic: e.topic,
        message: JSON.stringify(e.message),
        file_id: e.fileId,
        available_at: e.availableAt,
        created_at: createdAt,
      })),
    )
    .execute();
}

/** The outbox over the shared Kysely database, in any dialect. */
export class KyselyOutboxStore implements OutboxStore {
  constructor(private readonly db: Kysely<Database>) {}

  async claimFileOutbox(fileId: string, leaseUntil: string): Promise<OutboxEntry[]> {
    const rows = await this.db
      .updateTable("outbox")
      .set((eb) => ({ available_at: leaseUntil, attempts: eb("attempts", "+", 1) }))
      .where("file_id", "=", fileId)
      .where("attempts", "=", 0)
      .returningAll()
      .execute();
    return rows.map(toEntry);
  }

  async claimDueOutboxEntries(now: string, leaseUntil: string, limit: number): Promise<OutboxEntry[]> {
    const due = await this.db
      .selectFrom("outbox")
      .selectAll()
      .where("available_at", "<=", now)
      .orderBy("available_at", "asc")
      .limit(limit)
      .execute();
    const claimed: OutboxEntry[] = [];
    for (const row of due) {
      // Portable (SQLite has no SKIP LOCKED): the claim holds only if nobody moved the entry since.
      const mine = await this.db
        .updateTable("outbox")
        .set((eb) => ({ available_at: leaseUntil, attempts: eb("attempts", "+", 1) }))
        .where("id", "=", row.id)
        .where("available_at", "=", row.available_at)
        .where("attempts", "=", row.attempts)
        .returningAll()
        .executeTakeFirst();
      if (mine) claimed.push(toEntry(mine));
    }
    return claimed;
  }

  async deleteOutboxEntry(id: string): Promise<void> {
    await this.db.deleteFrom("outbox").where("id", "=", id).execute();
  }

  async countOutboxEntries(): Promise<number> {
    const row = await this.db
      .selectFrom("outbox")
      .select((eb) => eb.fn.countAll<string | number>().as("n"))
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }
}
