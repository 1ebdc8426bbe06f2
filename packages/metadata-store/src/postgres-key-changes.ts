import pg from "pg";
import type { KeyChange, KeyChangeFeed, KeyChangeListener } from "./api-key-store.ts";

/** The channel of the notices that migration 0010's triggers send. */
export const KEY_CHANGES_CHANNEL = "locus_key_changes";

/** After a lost connection, listening is tried again after this long, doubling up to the most. */
const FIRST_RETRY_MS = 500;
const MOST_RETRY_MS = 15_000;

/**
 * Listens for the triggers' notices on a connection of its own (a pooled one would be handed to
 * queries), keeping those of this store's schema: several deployments may share one database. A
 * lost connection is told to the listener at once and tried again, with growing waits, until
 * close(); live() is told once listening again.
 */
export function listenForPostgresKeyChanges(
  config: pg.ClientConfig,
  schema: string,
  listener: KeyChangeListener,
): KeyChangeFeed {
  let client: pg.Client | undefined;
  let closed = false;
  let retryMs = FIRST_RETRY_MS;
  let retry: NodeJS.Timeout | undefined;

  const lost = (connection: pg.Client, error: Error) => {
    if (connection !== client) return;
    client = undefined;
    connection.end().catch(() => undefined);
    listener.lost(error);
    if (closed) return;
    retry = setTimeout(() => void listen(), retryMs);
    retryMs = Math.min(retryMs * 2, MOST_RETRY_MS);
  };

  const listen = async () => {
    // Named so that an operator can tell it in pg_stat_activity: it sits idle by design.
    const connection = new pg.Client({
      ...config,
      application_name: `locus key changes ${schema}`.slice(0, 63),
    });
    client = connection;
    connection.on("error", (error) => lost(connection, error));
    connection.on("end", () => lost(connection, new Error("The connection to Postgres ended")));
    connection.on("notification", ({ channel, payload }) => {
      if (channel !== KEY_CHANGES_CHANNEL || payload === undefined) return;
      const change = parseNotice(payload, schema);
      if (change) listener.changed(change);
    });
    try {
      await connection.connect();
      await connection.query(`listen ${KEY_CHANGES_CHANNEL}`);
    } catch (error) {
      lost(connection, error instanceof Error ? error : new Error(String(error)));
      return;
    }
    if (closed || connection !== client) return;
    retryMs = FIRST_RETRY_MS;
    listener.live();
  };
  void listen();

  return {
    close: async () => {
      closed = true;
      clearTimeout(retry);
      const connection = client;
      client = undefined;
      await connection?.end().catch(() => undefined);
    },
  };
}

/** "<schema> <table> <id>" as the triggers send it; null for another schema's or an unknown table. */
function parseNotice(payload: string, schema: string): KeyChange | null {
  const [from, table, id] = payload.split(" ");
  if (from !== schema || !id) return null;
  if (table === "api_keys") return { keyId: id };
  if (table === "users") return { userId: id };
  return null;
}
