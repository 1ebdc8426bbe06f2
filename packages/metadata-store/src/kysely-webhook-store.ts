import { randomUUID } from "node:crypto";
import type { Kysely, Selectable } from "kysely";
import { keysetCursor, type FileEventType } from "@locus/contracts";
import { afterCursor } from "./keyset.ts";
import type {
  Database,
  WebhookAttemptsTable,
  WebhookDeliveriesTable,
  WebhookEndpointsTable,
} from "./schema.ts";
import type {
  AttemptOutcome,
  ClaimedDelivery,
  DeliveryPage,
  DeliveryStatus,
  NewWebhookEndpoint,
  WebhookAttempt,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointChange,
  WebhookStore,
} from "./webhook-store.ts";

const toEndpoint = (r: Selectable<WebhookEndpointsTable>): WebhookEndpoint => ({
  id: r.id,
  userId: r.user_id,
  url: r.url,
  description: r.description,
  events: JSON.parse(r.events) as FileEventType[],
  secret: r.secret,
  previousSecret: r.previous_secret,
  previousSecretExpiresAt: r.previous_secret_expires_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  disabledAt: r.disabled_at,
  disabledReason: r.disabled_reason,
  lastSuccessAt: r.last_success_at,
});

const toDelivery = (r: Selectable<WebhookDeliveriesTable>): WebhookDelivery => ({
  id: r.id,
  endpointId: r.endpoint_id,
  userId: r.user_id,
  eventId: r.event_id,
  eventType: r.event_type as FileEventType,
  payload: r.payload,
  status: r.status as DeliveryStatus,
  attempts: Number(r.attempts),
  maxAttempts: Number(r.max_attempts),
  nextAttemptAt: r.next_attempt_at,
  lastStatusCode: r.last_status_code,
  lastError: r.last_error,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  redeliveredAt: r.redelivered_at,
});

const toAttempt = (r: Selectable<WebhookAttemptsTable>): WebhookAttempt => ({
  id: r.id,
  deliveryId: r.delivery_id,
  attemptedAt: r.attempted_at,
  statusCode: r.status_code,
  error: r.error,
  durationMs: Number(r.duration_ms),
});

/** Webhook endpoints, deliveries and attempts over the shared Kysely database, in any dialect. */
export class KyselyWebhookStore implements WebhookStore {
  constructor(private readonly db: Kysely<Database>) {}

  async createWebhookEndpoint(endpoint: NewWebhookEndpoint, at: string): Promise<WebhookEndpoint> {
    const row = {
      id: endpoint.id,
      user_id: endpoint.userId,
      url: endpoint.url,
      description: endpoint.description,
      events: JSON.stringify(endpoint.events),
      secret: endpoint.secret,
      created_at: at,
      updated_at: at,
      disabled_at: null,
      disabled_reason: null,
      last_success_at: null,
      previous_secret: null,
      previous_secret_expires_at: null,
    };
    await this.db.insertInto("webhook_endpoints").values(row).execute();
    return toEndpoint(row);
  }

  async listWebhookEndpoints(userId: string): Promise<WebhookEndpoint[]> {
    const rows = await this.db
      .selectFrom("webhook_endpoints")
      .selectAll()
      .where("user_id", "=", userId)
      .orderBy("created_at")
      .orderBy("id")
      .execute();
    return rows.map(toEndpoint);
  }

  async getWebhookEndpoint(userId: string, endpointId: string): Promise<WebhookEndpoint | null> {
    const row = await this.db
      .selectFrom("webhook_endpoints")
      .selectAll()
      .where("id", "=", endpointId)
      .where("user_id", "=", userId)
      .executeTakeFirst();
    return row ? toEndpoint(row) : null;
  }

  async updateWebhookEndpoint(
    userId: string,
    endpointId: string,
    change: WebhookEndpointChange,
    at: string,
  ): Promise<WebhookEndpoint | null> {
    const overlap = change.previousSecretExpiresAt !== undefined && change.previousSecretExpiresAt > at;
    const result = await this.db
      .updateTable("webhook_endpoints")
      .set((eb) => ({
        updated_at: at,
        ...(change.url === undefined ? {} : { url: change.url }),
        ...(change.events === undefined ? {} : { events: JSON.stringify(change.events) }),
        ...(change.description === undefined ? {} : { description: change.description }),
        ...(change.secret === undefined
          ? {}
          : {
              secret: change.secret,
              // The secret being replaced (the row's value before this update) keeps signing for
              // the overlap; a rotation before it ends drops the older one.
              previous_secret: overlap ? eb.ref("secret") : null,
              previous_secret_expires_at: overlap ? (change.previousSecretExpiresAt ?? null) : null,
            }),
        ...(change.enable ? { disabled_at: null, disabled_reason: null } : {}),
      }))
      .where("id", "=", endpointId)
      .where("user_id", "=", userId)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) return null;
    return this.getWebhookEndpoint(userId, endpointId);
  }

  async deleteWebhookEndpoint(userId: string, endpointId: string): Promise<boolean> {
    // Deliveries and attempts go with it (on delete cascade; SQLite's foreign_keys is on).
    const result = await this.db
      .deleteFrom("webhook_endpoints")
      .where("id", "=", endpointId)
      .where("user_id", "=", userId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async endpointsFor(userId: string, eventType: FileEventType): Promise<WebhookEndpoint[]> {
    const rows = await this.db
      .selectFrom("webhook_endpoints")
      .selectAll()
      .where("user_id", "=", userId)
      .execute();
    // A handful per account: filtered here rather than by a JSON operator each dialect spells apart.
    return rows.map(toEndpoint).filter((e) => e.events.includes(eventType));
  }

  async enqueueDelivery(
    d: Pick<
      WebhookDelivery,
      "id" | "endpointId" | "userId" | "eventId" | "eventType" | "payload" | "maxAttempts" | "createdAt"
    >,
  ): Promise<boolean> {
    const result = await this.db
      .insertInto("webhook_deliveries")
      .values({
        id: d.id,
        endpoint_id: d.endpointId,
        user_id: d.userId,
        event_id: d.eventId,
        event_type: d.eventType,
        payload: d.payload,
        status: "pending",
        attempts: 0,
        max_attempts: d.maxAttempts,
        next_attempt_at: d.createdAt,
        lease_owner: null,
        lease_until: null,
        last_status_code: null,
        last_error: null,
        created_at: d.createdAt,
        updated_at: d.createdAt,
        redelivered_at: null,
      })
      // The event is owed once per endpoint, however often its message arrives.
      .onConflict((oc) => oc.columns(["endpoint_id", "event_id"]).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  async claimDueDeliveries(
    owner: string,
    now: string,
    leaseUntil: string,
    limit: number,
  ): Promise<ClaimedDelivery[]> {
    const candidates = await this.db
      .selectFrom("webhook_deliveries as d")
      .innerJoin("webhook_endpoints as e", "e.id", "d.endpoint_id")
      .select(["d.id", "d.endpoint_id"])
      .where("d.status", "=", "pending")
      .where("d.next_attempt_at", "<=", now)
      .where((eb) => eb.or([eb("d.lease_until", "is", null), eb("d.lease_until", "<", now)]))
      .where("e.disabled_at", "is", null)
      // One attempt in flight per endpoint: an account whose receivers hang cannot take every
      // worker's slots from the others (its next delivery waits for the one being sent).
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom("webhook_deliveries as busy")
              .select("busy.id")
              .whereRef("busy.endpoint_id", "=", "d.endpoint_id")
              .where("busy.lease_until", ">=", now),
          ),
        ),
      )
      .orderBy("d.next_attempt_at")
      .limit(limit)
      .execute();
    const claimed: ClaimedDelivery[] = [];
    // The earliest due of each endpoint only (one attempt in flight per endpoint, as below).
    const firstPerEndpoint = new Map<string, string>();
    for (const c of candidates)
      if (!firstPerEndpoint.has(c.endpoint_id)) firstPerEndpoint.set(c.endpoint_id, c.id);
    for (const id of firstPerEndpoint.values()) {
      // Taken only if nobody took it since the look above: the same conditions, in one statement.
      const result = await this.db
        .updateTable("webhook_deliveries")
        .set({ lease_owner: owner, lease_until: leaseUntil })
        .where("id", "=", id)
        .where("status", "=", "pending")
        // Still due, too: another worker may have attempted it since the look above and set its
        // next attempt later (taking it now would send a retry early).
        .where("next_attempt_at", "<=", now)
        .where((eb) => eb.or([eb("lease_until", "is", null), eb("lease_until", "<", now)]))
        // Nor has another worker taken one of its endpoint's deliveries meanwhile.
        .where((eb) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom("webhook_deliveries as busy")
                .select("busy.id")
                .whereRef("busy.endpoint_id", "=", "webhook_deliveries.endpoint_id")
                .where("busy.lease_until", ">=", now),
            ),
          ),
        )
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) continue;
      const row = await this.db
        .selectFrom("webhook_deliveries as d")
        .innerJoin("webhook_endpoints as e", "e.id", "d.endpoint_id")
        .selectAll("d")
        .select([
          "e.user_id as e_user_id",
          "e.url as e_url",
          "e.description as e_description",
          "e.events as e_events",
          "e.secret as e_secret",
          "e.created_at as e_created_at",
          "e.updated_at as e_updated_at",
          "e.disabled_at as e_disabled_at",
          "e.disabled_reason as e_disabled_reason",
          "e.last_success_at as e_last_success_at",
          "e.previous_secret as e_previous_secret",
          "e.previous_secret_expires_at as e_previous_secret_expires_at",
        ])
        .where("d.id", "=", id)
        .executeTakeFirst();
      if (!row) continue;
      claimed.push({
        delivery: toDelivery(row),
        endpoint: toEndpoint({
          id: row.endpoint_id,
          user_id: row.e_user_id,
          url: row.e_url,
          description: row.e_description,
          events: row.e_events,
          secret: row.e_secret,
          created_at: row.e_created_at,
          updated_at: row.e_updated_at,
          disabled_at: row.e_disabled_at,
          disabled_reason: row.e_disabled_reason,
          last_success_at: row.e_last_success_at,
          previous_secret: row.e_previous_secret,
          previous_secret_expires_at: row.e_previous_secret_expires_at,
        }),
      });
    }
    return claimed;
  }

  async recordAttempt(deliveryId: string, owner: string, outcome: AttemptOutcome): Promise<boolean> {
    const { attempt } = outcome;
    return this.db.transaction().execute(async (tx) => {
      const moved = await tx
        .updateTable("webhook_deliveries")
        .set((eb) => ({
          attempts: eb("attempts", "+", 1),
          status: outcome.status,
          next_attempt_at: outcome.nextAttemptAt,
          lease_owner: null,
          lease_until: null,
          last_status_code: attempt.statusCode,
          last_error: attempt.error,
          updated_at: attempt.attemptedAt,
        }))
        .where("id", "=", deliveryId)
        .where("lease_owner", "=", owner)
        .executeTakeFirst();
      if (Number(moved.numUpdatedRows) === 0) return false;
      await tx
        .insertInto("webhook_attempts")
        .values({
          id: randomUUID(),
          delivery_id: deliveryId,
          attempted_at: attempt.attemptedAt,
          status_code: attempt.statusCode,
          error: attempt.error,
          duration_ms: Math.round(attempt.durationMs),
        })
        .execute();
      if (outcome.status === "succeeded") {
        const delivery = await tx
          .selectFrom("webhook_deliveries")
          .select("endpoint_id")
          .where("id", "=", deliveryId)
          .executeTakeFirstOrThrow();
        await tx
          .updateTable("webhook_endpoints")
          .set({ last_success_at: attempt.attemptedAt })
          .where("id", "=", delivery.endpoint_id)
          .execute();
      }
      return true;
    });
  }

  async disableWebhookEndpoint(
    endpointId: string,
    reason: string,
    at: string,
    unlessSuccessSince: string,
  ): Promise<boolean> {
    const result = await this.db
      .updateTable("webhook_endpoints")
      .set({ disabled_at: at, disabled_reason: reason, updated_at: at })
      .where("id", "=", endpointId)
      .where("disabled_at", "is", null)
      .where((eb) =>
        eb.or([eb("last_success_at", "is", null), eb("last_success_at", "<", unlessSuccessSince)]),
      )
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async listDeliveries(
    userId: string,
    endpointId: string,
    page: { limit: number; cursor?: string | undefined },
  ): Promise<DeliveryPage> {
    let query = this.db
      .selectFrom("webhook_deliveries")
      .selectAll()
      .where("endpoint_id", "=", endpointId)
      .where("user_id", "=", userId);
    if (page.cursor !== undefined) query = query.where(afterCursor(page.cursor, "created_at"));
    const rows = await query
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .limit(page.limit + 1)
      .execute();
    const deliveries = rows.slice(0, page.limit).map(toDelivery);
    const attempts =
      deliveries.length === 0
        ? []
        : await this.db
            .selectFrom("webhook_attempts")
            .selectAll()
            .where(
              "delivery_id",
              "in",
              deliveries.map((d) => d.id),
            )
            .orderBy("attempted_at")
            .orderBy("id")
            .execute();
    const last = deliveries[deliveries.length - 1];
    return {
      deliveries: deliveries.map((d) => ({
        ...d,
        attemptLog: attempts.filter((a) => a.delivery_id === d.id).map(toAttempt),
      })),
      nextCursor: rows.length > page.limit && last ? keysetCursor({ at: last.createdAt, id: last.id }) : null,
    };
  }

  async redeliver(
    userId: string,
    endpointId: string,
    deliveryId: string,
    at: string,
  ): Promise<WebhookDelivery | null> {
    const current = await this.db
      .selectFrom("webhook_deliveries")
      .select("status")
      .where("id", "=", deliveryId)
      .where("endpoint_id", "=", endpointId)
      .where("user_id", "=", userId)
      .executeTakeFirst();
    if (!current) return null;
    const result = await this.db
      .updateTable("webhook_deliveries")
      .set((eb) =>
        current.status === "pending"
          ? // Still being retried: only brought forward, its remaining attempts kept.
            { next_attempt_at: at, updated_at: at }
          : // Finished: one more attempt, now.
            {
              status: "pending",
              max_attempts: eb("attempts", "+", 1),
              next_attempt_at: at,
              redelivered_at: at,
              updated_at: at,
            },
      )
      .where("id", "=", deliveryId)
      .where("endpoint_id", "=", endpointId)
      .where("user_id", "=", userId)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) return null;
    const row = await this.db
      .selectFrom("webhook_deliveries")
      .selectAll()
      .where("id", "=", deliveryId)
      .executeTakeFirstOrThrow();
    return toDelivery(row);
  }

  async pruneDeliveries(before: string, limit: number): Promise<number> {
    const old = await this.db
      .selectFrom("webhook_deliveries")
      .select("id")
      .where("status", "in", ["succeeded", "failed"])
      .where("updated_at", "<", before)
      .limit(limit)
      .execute();
    if (old.length === 0) return 0;
    // Their attempts go with them (on delete cascade).
    const result = await this.db
      .deleteFrom("webhook_deliveries")
      .where(
        "id",
        "in",
        old.map((d) => d.id),
      )
      .where("status", "in", ["succeeded", "failed"])
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async expireHeldDeliveries(before: string, at: string, reason: string): Promise<number> {
    const result = await this.db
      .updateTable("webhook_deliveries")
      .set({ status: "failed", next_attempt_at: null, last_error: reason, updated_at: at })
      .where("status", "=", "pending")
      .where("created_at", "<", before)
      // Not one being attempted now: its attempt's outcome is recorded by its worker.
      .where((eb) => eb.or([eb("lease_until", "is", null), eb("lease_until", "<", at)]))
      .where("endpoint_id", "in", (eb) =>
        eb.selectFrom("webhook_endpoints").select("id").where("disabled_at", "is not", null),
      )
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }
}
