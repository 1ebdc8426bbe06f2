import { AsyncLocalStorage } from "node:async_hooks";

/** The request a piece of work belongs to, available anywhere below the handler that serves it. */
export const requestContext = new AsyncLocalStorage<{ requestId: string }>();

export const currentRequestId = (): string | undefined => requestContext.getStore()?.requestId;
