import type { Kysely } from "kysely";
import type { Database } from "./schema.ts";
import type { UsageStore } from "./usage-store.ts";

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
}
