import type { Kysely } from "kysely";
import type { Database } from "./schema.ts";
import type { ActivityKind, DailyActivity, UsageStore } from "./usage-store.ts";

/** How daily_usage stores the dashboard page's own activity: a key id no key has (keys are UUIDs). */
const SESSION_KEY_ID = "";

/** Monthly upload counts over the shared Kysely database, in any dialect. */
export class KyselyUsageStore implements UsageStore {
  constructor(private readonly db: Kysely<Database>) {}

  async reserveUpload(userId: string, month: string, quota: number): Promise<boolean> {
    await this.db
      .insertInto("usage")
      .values({ user_id: userId, month, uploads: 0 })
      .onConflict((oc) => oc.columns(["user_id", "month"]).doNothing())
      .execute();
    let query = this.db
      .updateTable("usage")
      .set((eb) => ({ uploads: eb("uploads", "+", 1) }))
      .where("user_id", "=", userId)
      .where("month", "=", month);
    if (quota > 0) query = query.where("uploads", "<", quota);
    const result = await query.executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async releaseUpload(userId: string, month: string): Promise<void> {
    await this.db
      .updateTable("usage")
      .set((eb) => ({ uploads: eb("uploads", "-", 1) }))
      .where("user_id", "=", userId)
      .where("month", "=", month)
      .where("uploads", ">", 0)
      .execute();
  }

  async uploadsThisMonth(userId: string, month: string): Promise<number> {
    const row = await this.db
      .selectFrom("usage")
      .select("uploads")
      .where("user_id", "=", userId)
      .where("month", "=", month)
      .executeTakeFirst();
    return row ? Number(row.uploads) : 0;
  }

  async recordActivity(input: {
    userId: string;
    keyId: string | null;
    day: string;
    kind: ActivityKind;
  }): Promise<void> {
    const searches = input.kind === "search" ? 1 : 0;
    const uploads = input.kind === "upload" ? 1 : 0;
    // One statement either way: the first event of the day inserts the row, the next ones add to it.
    await this.db
      .insertInto("daily_usage")
      .values({
        user_id: input.userId,
        key_id: input.keyId ?? SESSION_KEY_ID,
        day: input.day,
        searches,
        uploads,
      })
      .onConflict((oc) =>
        oc.columns(["user_id", "key_id", "day"]).doUpdateSet((eb) => ({
          searches: eb("daily_usage.searches", "+", searches),
          uploads: eb("daily_usage.uploads", "+", uploads),
        })),
      )
      .execute();
  }

  async dailyActivity(userId: string, since: string): Promise<DailyActivity[]> {
    const rows = await this.db
      .selectFrom("daily_usage")
      .select(["day", "key_id", "searches", "uploads"])
      .where("user_id", "=", userId)
      .where("day", ">=", since)
      .orderBy("day")
      .orderBy("key_id")
      .execute();
    return rows.map((r) => ({
      day: r.day,
      keyId: r.key_id === SESSION_KEY_ID ? null : r.key_id,
      searches: Number(r.searches),
      uploads: Number(r.uploads),
    }));
  }
}
