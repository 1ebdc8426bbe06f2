import type { NextFunction, Request, Response } from "express";
import { RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import { Errors } from "@locus/contracts";
import type { Plan } from "@locus/metadata-store";
import { principalOf } from "./authenticate.ts";
import { memoryCounters, type LimiterCounters } from "@locus/http";

/**
 * Requests per second per account, by plan, on every endpoint. Headers follow the IETF RateLimit
 * draft (RateLimit-Limit, -Remaining, -Reset) and a refusal carries Retry-After. Counted where
 * `counters` count: in this process, or shared by every gateway replica (see redisCounters).
 */
export function rateLimit(
  limits: Record<Plan, number>,
  counters: LimiterCounters = memoryCounters,
  refused: (plan: Plan) => void = () => undefined,
) {
  const limiter = (plan: Plan): RateLimiterAbstract =>
    counters({ points: limits[plan], duration: 1, keyPrefix: `locus:ratelimit:${plan}` });
  const limiters: Record<Plan, RateLimiterAbstract> = {
    free: limiter("free"),
    pro: limiter("pro"),
    enterprise: limiter("enterprise"),
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
      refused(user.plan);
      throw Errors.rateLimited(user.plan, limit, retryAfter);
    }
    next();
  };
}
