// The connection pool, and what a failure of Postgres means: down is "unavailable" (503, retried);
// any other error passes through unchanged.

import { types } from "node:util";
import pg from "pg";
import { LocusError } from "@locus/contracts";

/** Readiness probes must answer quickly; a dead host should not hold a request for a minute. */
const CONNECT_TIMEOUT_MS = 2_000;

/** The pool of an index's connections, with its timeouts. */
export function searchIndexPool(connectionString: string, poolSize: number | undefined): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max: poolSize ?? 10,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    application_name: "locus-search-index",
  });
  // An idle connection that dies (Postgres restarted) is dropped by the pool and the next query
  // opens a new one; without a listener the 'error' event would crash the process.
  pool.on("error", () => undefined);
  return pool;
}

export async function rollbackAndRelease(client: pg.PoolClient): Promise<void> {
  try {
    await client.query("ROLLBACK");
    client.release();
  } catch (err) {
    // The connection is broken: destroy it rather than hand it to the next caller.
    client.release(err instanceof Error ? err : true);
  }
}

const DOWN_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
  "53300", // too_many_connections
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now
]);

/**
 * Postgres being down is an operational state with a status of its own (503, retried by workers),
 * not a bug: say so in words an operator can act on. Other errors pass through unchanged.
 */
export function unavailableIfDown(err: unknown): unknown {
  // isNativeError too: socket errors come from Node's own realm, where `instanceof Error` can fail
  // (under jest's VM contexts, for one).
  if (err instanceof LocusError || !(err instanceof Error || types.isNativeError(err))) return err;
  const code = (err as { code?: unknown }).code;
  const down =
    (typeof code === "string" && (DOWN_CODES.has(code) || code.startsWith("08"))) ||
    /timeout exceeded when trying to connect|Connection terminated/i.test(err.message);
  return down
    ? new LocusError(
        "unavailable",
        "The search index database (Postgres) is unreachable; try again shortly.",
        {
          cause: err,
        },
      )
    : err;
}
