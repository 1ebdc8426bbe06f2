import type { NextFunction, Request, Response } from "express";
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import { LocusError } from "@locus/contracts";
import type { Plan } from "@locus/metadata-store";
import { principalOf } from "./authenticate.ts";

/**
 * Requests per second per account, by plan, on every endpoint. Headers follow the IETF RateLimit
 * draft (RateLimit-Limit, -Remaining, -Reset) and a refusal carries Retry-After.
 */
export function rateLimit(limits: Record<Plan, number>) {
  const limiters: Record<Plan, RateLimiterMemory> = {
    free: new RateLimiterMemory({ points: limits.free, duration: 1 }),
    pro: new RateLimiterMemory({ points: limits.pro, duration: 1 }),
    enterprise: new RateLimiterMemory({ points: limits.enterprise, duration: 1 }),
  };

  return async (_req: Request, res: Response, next: NextFunction): Promise<void> => {
    const { user } = principalOf(res);
    const limit = limits[user.plan];
    const setHeaders = (r: RateLimiterRes) => {
      res.setHeader("RateLimit-Limit", String(limit));
      res.setHeader("RateLimit-Remaining", String(Math.max(0, r.remainingPoints)));
      res.setHeader("RateLimit-Reset", String(Math.max(1, Math.ceil(r.msBeforeNext / 1000))));
    };
    try {
      setHeaders(await limiters[user.plan].consume(user.id));
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      setHeaders(rejection);
      const retryAfter = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
      throw new LocusError(
        "rate_limited",
        `Rate limit exceeded: the ${user.plan} plan allows ${limit} requests per second. Retry after ${retryAfter} second${retryAfter === 1 ? "" : "s"}.`,
        { headers: { "Retry-After": String(retryAfter) } },
      );
    }
    next();
  };
}
