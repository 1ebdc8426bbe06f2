import { RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import { LocusError } from "@locus/contracts";
import { memoryCounters, type LimiterCounters } from "@locus/http";

export interface SignInLimits {
  /** Attempts allowed per email address in a window (default 5). */
  perEmail: number;
  /** Attempts allowed per client address in a window (default 20: offices share addresses). */
  perAddress: number;
  /** Window length in ms (default 15 minutes); counted in whole seconds. */
  windowMs: number;
}

export const DEFAULT_SIGNIN_LIMITS: SignInLimits = { perEmail: 5, perAddress: 20, windowMs: 15 * 60_000 };

/** New accounts from one address: 10 an hour is plenty for people and little for a script. */
export const DEFAULT_SIGNUP_LIMITS: SignInLimits = { perEmail: 5, perAddress: 10, windowMs: 60 * 60_000 };

export interface SignInLimiterOptions {
  /** How a refusal starts: "Too many failed sign-ins". */
  what?: string;
  /**
   * Where attempts are counted: shared by every gateway (redisCounters), or in this process's
   * memory (memoryCounters, the default).
   */
  counters?: LimiterCounters | undefined;
  /** Names this limiter's counters (their keys in Redis): "signin", "signup". */
  name?: string;
}

/**
 * Slows password guessing: after too many attempts for one email (someone guessing that account)
 * or from one address (someone trying many accounts), further attempts are refused with 429 and
 * Retry-After until the window has passed, without even checking the password.
 *
 * An attempt is counted when it arrives, before the password is checked, in one atomic step per
 * counter (rate-limiter-flexible: an increment in memory, or a Lua script in Redis): a hundred
 * guesses sent at once get five checks, not a hundred. A success gives its attempt back (the email
 * starts afresh, the address gets its point back), so only failures use up the allowance.
 *
 * With Redis (redisCounters) every gateway shares the counts. If Redis fails, each gateway goes on counting in its
 * own memory (the insurance limiter) rather than refusing everyone or letting every guess through.
 */
export class SignInLimiter {
  private readonly byEmail: RateLimiterAbstract;
  private readonly byAddress: RateLimiterAbstract;
  private readonly what: string;

  constructor(limits: SignInLimits = DEFAULT_SIGNIN_LIMITS, options: SignInLimiterOptions = {}) {
    this.what = options.what ?? "Too many failed sign-ins";
    const name = options.name ?? "signin";
    const duration = Math.max(1, Math.ceil(limits.windowMs / 1000));
    const counters = options.counters ?? memoryCounters;
    const limiter = (kind: string, points: number): RateLimiterAbstract =>
      counters({ points, duration, keyPrefix: `locus:${name}:${kind}` });
    this.byEmail = limiter("email", limits.perEmail);
    this.byAddress = limiter("address", limits.perAddress);
  }

  /**
   * Counts one attempt against the email and the address, and throws 429 (with Retry-After) when
   * either had none left. Call it before any costly check.
   */
  async attempt(email: string, address: string): Promise<void> {
    // The email first: guesses at a locked account are refused without using up the address's
    // allowance (an office behind one address is not locked out by one attacked account).
    await this.consume(this.byEmail, email);
    try {
      await this.consume(this.byAddress, address);
    } catch (err) {
      await this.byEmail.reward(email, 1);
      throw err;
    }
  }

  private async consume(limiter: RateLimiterAbstract, key: string): Promise<void> {
    try {
      await limiter.consume(key);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      const seconds = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
      throw new LocusError(
        "rate_limited",
        `${this.what}; try again in ${Math.ceil(seconds / 60)} minute(s).`,
        { headers: { "Retry-After": String(seconds) } },
      );
    }
  }

  /** The attempt succeeded: the email starts afresh, and the address gets its attempt back. */
  async succeeded(email: string, address: string): Promise<void> {
    await Promise.all([this.byEmail.delete(email), this.byAddress.reward(address, 1)]);
  }
}
