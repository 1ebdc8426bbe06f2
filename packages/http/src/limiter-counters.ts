import type { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract } from "rate-limiter-flexible";

/** One counter: `points` per key in each window of `duration` seconds, its keys named by `keyPrefix`. */
export interface CounterOptions {
  points: number;
  duration: number;
  keyPrefix: string;
}

/**
 * Where rate limits and sign-in attempts are counted: makes the counters that the gateway's rate
 * limit and the dashboard's sign-in limiters consume. Chosen once, where the process is wired.
 */
export type LimiterCounters = (options: CounterOptions) => RateLimiterAbstract;

/** Counts in this process's memory: each process (each gateway replica) counts on its own. */
export const memoryCounters: LimiterCounters = (options) => new RateLimiterMemory(options);

/**
 * Counts in Redis, shared by every gateway replica. If Redis fails, each replica goes on counting in
 * its own memory (rate-limiter-flexible's insurance limiter) rather than refusing or failing
 * requests, or letting every attempt through.
 */
export function redisCounters(redis: Redis): LimiterCounters {
  return (options) =>
    new RateLimiterRedis({ storeClient: redis, ...options, insuranceLimiter: memoryCounters(options) });
}
