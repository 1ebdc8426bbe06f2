import { AsyncLocalStorage, AsyncResource } from "node:async_hooks";
import type { Request } from "express";

/** The request a piece of work belongs to, available anywhere below the handler that serves it. */
export const requestContext = new AsyncLocalStorage<{ requestId: string }>();

export const currentRequestId = (): string | undefined => requestContext.getStore()?.requestId;

/** Each request's async context as its handling began (see createProcessApp). */
const scopes = new WeakMap<Request, AsyncResource>();

/** Keeps the async context active now as `req`'s: its request id and its trace span. */
export function keepRequestScope(req: Request): void {
  scopes.set(req, new AsyncResource("LocusRequest"));
}

/**
 * Runs `fn` in `req`'s own async context (its request id, its trace span). For code a library
 * calls from its streams' events, which run outside it: multer calls its storage engine from the
 * multipart parser's events, where the upload would otherwise start a trace of its own.
 */
export function inRequestScope<T>(req: Request, fn: () => T): T {
  const scope = scopes.get(req);
  return scope ? scope.runInAsyncScope(fn) : fn();
}
