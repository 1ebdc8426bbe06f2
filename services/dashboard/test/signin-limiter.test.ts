import type { LocusError } from "@locus/contracts";
import { DEFAULT_SIGNIN_LIMITS, DEFAULT_SIGNUP_LIMITS, SignInLimiter } from "../src/index.ts";

const refused = (fn: () => void): LocusError | null => {
  try {
    fn();
    return null;
  } catch (err) {
    return err as LocusError;
  }
};

describe("SignInLimiter", () => {
  it("refuses an email after its failures, until the window has passed, and a success clears it", () => {
    const limiter = new SignInLimiter(DEFAULT_SIGNIN_LIMITS);
    const t0 = 1_000_000;
    for (let i = 0; i < 5; i++) {
      expect(refused(() => limiter.check("a@x.test", "10.0.0.1", t0))).toBeNull();
      limiter.failed("a@x.test", "10.0.0.1", t0);
    }
    const error = refused(() => limiter.check("a@x.test", "10.0.0.2", t0 + 60_000));
    expect(error?.code).toBe("rate_limited");
    expect(error?.headers["Retry-After"]).toBe(String(14 * 60));
    // Another account from another address is not held back by it.
    expect(refused(() => limiter.check("b@x.test", "10.0.0.3", t0))).toBeNull();
    expect(refused(() => limiter.check("a@x.test", "10.0.0.2", t0 + 15 * 60_000))).toBeNull();
    limiter.failed("a@x.test", "10.0.0.1", t0 + 15 * 60_000);
    limiter.succeeded("a@x.test");
    expect(refused(() => limiter.check("a@x.test", "10.0.0.1", t0 + 15 * 60_000))).toBeNull();
  });

  it("refuses an address that tries many accounts", () => {
    const limiter = new SignInLimiter(DEFAULT_SIGNIN_LIMITS);
    for (let i = 0; i < 20; i++) limiter.failed(`user${i}@x.test`, "10.9.9.9", 0);
    expect(refused(() => limiter.check("new@x.test", "10.9.9.9", 1))?.message).toMatch(
      /Too many failed sign-ins/,
    );
    expect(refused(() => limiter.check("new@x.test", "10.9.9.8", 1))).toBeNull();
  });

  it("as the sign-up limiter: 10 accounts an hour from one address, with its own sentence", () => {
    const limiter = new SignInLimiter(DEFAULT_SIGNUP_LIMITS, "Too many sign-ups from this address");
    for (let i = 0; i < 10; i++) {
      expect(refused(() => limiter.check(`u${i}@x.test`, "10.1.1.1", 0))).toBeNull();
      limiter.failed(`u${i}@x.test`, "10.1.1.1", 0);
    }
    const error = refused(() => limiter.check("u10@x.test", "10.1.1.1", 1));
    expect(error?.message).toMatch(/^Too many sign-ups from this address; try again in 60 minute\(s\)\.$/);
  });
});
