import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import type { LocusError } from "@locus/contracts";
import { redisCounters } from "@locus/http";
import { DEFAULT_SIGNIN_LIMITS, DEFAULT_SIGNUP_LIMITS, PasswordWork, SignInLimiter } from "../src/index.ts";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

const refused = async (attempt: Promise<unknown>): Promise<LocusError | null> => {
  try {
    await attempt;
    return null;
  } catch (err) {
    return err as LocusError;
  }
};

describe("SignInLimiter", () => {
  it("refuses an email after 5 attempts, from any address, until the window has passed", async () => {
    const limiter = new SignInLimiter({ ...DEFAULT_SIGNIN_LIMITS, windowMs: 1000 });
    for (let i = 0; i < 5; i++) expect(await refused(limiter.attempt("a@x.test", `10.0.0.${i}`))).toBeNull();
    const error = await refused(limiter.attempt("a@x.test", "10.0.0.99"));
    expect(error?.code).toBe("rate_limited");
    expect(error?.message).toMatch(/^Too many failed sign-ins; try again in 1 minute\(s\)\.$/);
    expect(error?.headers["Retry-After"]).toBe("1");
    // Another account from another address is not held back by it.
    expect(await refused(limiter.attempt("b@x.test", "10.0.1.1"))).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(await refused(limiter.attempt("a@x.test", "10.0.0.99"))).toBeNull();
  });

  it("the default window: Retry-After is the rest of the quarter hour", async () => {
    const limiter = new SignInLimiter(DEFAULT_SIGNIN_LIMITS);
    for (let i = 0; i < 5; i++) await limiter.attempt("w@x.test", "10.0.0.1");
    const error = await refused(limiter.attempt("w@x.test", "10.0.0.1"));
    expect(Number(error?.headers["Retry-After"])).toBeGreaterThan(14 * 60);
    expect(Number(error?.headers["Retry-After"])).toBeLessThanOrEqual(15 * 60);
  });

  it("counts attempts as they arrive: of 100 sent at once for one email, 5 pass", async () => {
    const limiter = new SignInLimiter(DEFAULT_SIGNIN_LIMITS);
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) => refused(limiter.attempt("many@x.test", `10.2.${i}.1`))),
    );
    expect(results.filter((r) => r === null)).toHaveLength(5);
    expect(results.filter((r) => r?.code === "rate_limited")).toHaveLength(95);
  });

  it("guesses at a locked account do not use up the address's allowance", async () => {
    const limiter = new SignInLimiter(DEFAULT_SIGNIN_LIMITS);
    for (let i = 0; i < 50; i++) await refused(limiter.attempt("locked@x.test", "10.6.0.1"));
    // 5 reached the check; 15 more accounts may still be tried from that address.
    for (let i = 0; i < 15; i++)
      expect(await refused(limiter.attempt(`p${i}@x.test`, "10.6.0.1"))).toBeNull();
    expect(await refused(limiter.attempt("q@x.test", "10.6.0.1"))).not.toBeNull();
  });

  it("a success starts the email afresh and gives the address its attempt back", async () => {
    const limiter = new SignInLimiter(DEFAULT_SIGNIN_LIMITS);
    for (let i = 0; i < 4; i++) await limiter.attempt("s@x.test", "10.3.0.1");
    await limiter.succeeded("s@x.test", "10.3.0.1");
    for (let i = 0; i < 5; i++) expect(await refused(limiter.attempt("s@x.test", "10.3.0.1"))).toBeNull();
    // 4 + 5 attempts, one given back: 8 of the address's 20 used; 12 more are allowed.
    for (let i = 0; i < 12; i++)
      expect(await refused(limiter.attempt(`o${i}@x.test`, "10.3.0.1"))).toBeNull();
    expect(await refused(limiter.attempt("last@x.test", "10.3.0.1"))).not.toBeNull();
  });

  it("refuses an address that tries many accounts", async () => {
    const limiter = new SignInLimiter(DEFAULT_SIGNIN_LIMITS);
    for (let i = 0; i < 20; i++) await limiter.attempt(`user${i}@x.test`, "10.9.9.9");
    expect((await refused(limiter.attempt("new@x.test", "10.9.9.9")))?.message).toMatch(
      /Too many failed sign-ins/,
    );
    expect(await refused(limiter.attempt("new@x.test", "10.9.9.8"))).toBeNull();
  });

  it("as the sign-up limiter: 10 accounts an hour from one address, with its own sentence", async () => {
    const limiter = new SignInLimiter(DEFAULT_SIGNUP_LIMITS, {
      what: "Too many sign-ups from this address",
      name: "signup",
    });
    for (let i = 0; i < 10; i++)
      expect(await refused(limiter.attempt(`u${i}@x.test`, "10.1.1.1"))).toBeNull();
    const error = await refused(limiter.attempt("u10@x.test", "10.1.1.1"));
    expect(error?.message).toMatch(/^Too many sign-ups from this address; try again in 60 minute\(s\)\.$/);
  });

  describe("with Redis (a real server), as two gateways", () => {
    let redis: Redis;
    beforeAll(() => {
      redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    });
    afterAll(async () => {
      await redis.quit();
    });

    it("shares the counts: 5 attempts in all for one email, however they are spread", async () => {
      // A name of its own, so runs and suites sharing the server never see each other's counts.
      const name = `test-${randomUUID()}`;
      const gatewayA = new SignInLimiter(DEFAULT_SIGNIN_LIMITS, { counters: redisCounters(redis), name });
      const gatewayB = new SignInLimiter(DEFAULT_SIGNIN_LIMITS, { counters: redisCounters(redis), name });
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          refused((i % 2 ? gatewayA : gatewayB).attempt("shared@x.test", `10.4.${i}.1`)),
        ),
      );
      expect(results.filter((r) => r === null)).toHaveLength(5);
      expect(await redis.exists(`locus:${name}:email:shared@x.test`)).toBe(1);
      await redis.del(`locus:${name}:email:shared@x.test`);
    });

    it("goes on counting in memory while Redis cannot be reached, rather than letting guesses through", async () => {
      const away = new Redis("redis://127.0.0.1:1", {
        maxRetriesPerRequest: 0,
        enableOfflineQueue: false,
        lazyConnect: true,
        retryStrategy: () => null,
      });
      away.on("error", () => undefined);
      const limiter = new SignInLimiter(DEFAULT_SIGNIN_LIMITS, {
        counters: redisCounters(away),
        name: "away",
      });
      const results = await Promise.all(
        Array.from({ length: 10 }, () => refused(limiter.attempt("away@x.test", "10.5.0.1"))),
      );
      expect(results.filter((r) => r === null)).toHaveLength(5);
      expect(results.filter((r) => r?.code === "rate_limited")).toHaveLength(5);
      away.disconnect();
    });
  });
});

describe("PasswordWork", () => {
  it("runs a few hashes at once, lets a bounded number wait, and refuses the rest with 503", async () => {
    const work = new PasswordWork({ concurrency: 2, maxWaiting: 3 });
    let running = 0;
    let most = 0;
    const hash = () =>
      work.run(async () => {
        running += 1;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 30));
        running -= 1;
        return "done";
      });
    const results = await Promise.allSettled(Array.from({ length: 8 }, hash));
    expect(most).toBe(2);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(5);
    const refusals = results.flatMap((r) => (r.status === "rejected" ? [r.reason as LocusError] : []));
    expect(refusals).toHaveLength(3);
    for (const refusal of refusals) {
      expect(refusal.status).toBe(503);
      expect(refusal.headers["Retry-After"]).toBe("1");
    }
    // Once the queue has drained, work is taken again.
    await expect(hash()).resolves.toBe("done");
  });
});
