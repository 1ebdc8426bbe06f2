// How the cluster's failures surface: a cluster that is down, slow or overloaded is "unavailable"
// (503, retried later); anything else passes through as it came.

import { LocusError } from "@locus/contracts";

export const UNAVAILABLE = "The search index is unavailable; try again shortly.";

/** Statuses that mean "not now": a full queue (429) or a shard or node not ready (503). */
export const RETRYABLE = new Set([429, 503]);

interface ResponseErrorLike {
  name: "ResponseError";
  statusCode: number;
  body?: unknown;
}

// By name rather than instanceof: the client's errors may come from another copy of
// @elastic/transport (a mock's), and names are what its own retry logic switches on.
export function isResponseError(err: unknown): err is ResponseErrorLike {
  return (
    typeof err === "object" &&
    err !== null &&
    (err as { name?: unknown }).name === "ResponseError" &&
    typeof (err as { statusCode?: unknown }).statusCode === "number"
  );
}

export function errorType(err: unknown): string | undefined {
  if (!isResponseError(err)) return undefined;
  const body = err.body as { error?: { type?: unknown } } | undefined;
  return typeof body?.error?.type === "string" ? body.error.type : undefined;
}

const DOWN_ERRORS = new Set(["TimeoutError", "ConnectionError", "NoLivingConnectionsError"]);

/**
 * A cluster that does not answer in time, cannot be reached, or is overloaded is an operational
 * state (503, retried by workers), not a bug. Other errors (a rejected mapping, bad credentials)
 * pass through unchanged.
 */
export function unavailableIfDown(err: unknown): unknown {
  if (err instanceof LocusError || typeof err !== "object" || err === null) return err;
  const name = (err as { name?: unknown }).name;
  const down =
    (typeof name === "string" && DOWN_ERRORS.has(name)) ||
    (isResponseError(err) && [429, 502, 503, 504].includes(err.statusCode));
  return down ? new LocusError("unavailable", UNAVAILABLE, { cause: err }) : err;
}
