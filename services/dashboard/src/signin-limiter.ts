import { LocusError } from "@locus/contracts";

export interface SignInLimits {
  /** Failed sign-ins allowed per email address in a window (default 5). */
  perEmail: number;
  /** Failed sign-ins allowed per client address in a window (default 20: offices share addresses). */
  perAddress: number;
  /** Window length in ms (default 15 minutes). */
  windowMs: number;
}

export const DEFAULT_SIGNIN_LIMITS: SignInLimits = { perEmail: 5, perAddress: 20, windowMs: 15 * 60_000 };

/** New accounts from one address: 10 an hour is plenty for people and little for a script. */
export const DEFAULT_SIGNUP_LIMITS: SignInLimits = { perEmail: 5, perAddress: 10, windowMs: 60 * 60_000 };

/**
 * Slows password guessing: after too many failed sign-ins for one email (someone guessing that
 * account) or from one address (someone trying many accounts), further attempts are refused with
 * 429 and Retry-After until the window has passed, without even checking the password. A success
 * clears the email's count. Counts live in this process (each gateway keeps its own): with N
 * gateways an attacker gets at most N times the attempts, still a handful per quarter hour.
 */
export class SignInLimiter {
  private readonly failures = new Map<string, { count: number; resetAt: number }>();

  constructor(
    private readonly limits: SignInLimits = DEFAULT_SIGNIN_LIMITS,
    /** How a refusal starts: "Too many failed sign-ins". */
    private readonly what = "Too many failed sign-ins",
  ) {}

  /** Throws 429 when either the email or the address has used up its attempts. */
  check(email: string, address: string, now = Date.now()): void {
    for (const [key, limit] of this.keys(email, address)) {
      const entry = this.failures.get(key);
      if (entry && entry.resetAt > now && entry.count >= limit) {
        const seconds = Math.max(1, Math.ceil((entry.resetAt - now) / 1000));
        throw new LocusError(
          "rate_limited",
          `${this.what}; try again in ${Math.ceil(seconds / 60)} minute(s).`,
          {
            headers: { "Retry-After": String(seconds) },
          },
        );
      }
    }
  }

  /** Counts one failed attempt (or, for sign-ups, one attempt) against the email and the address. */
  failed(email: string, address: string, now = Date.now()): void {
    this.sweep(now);
    for (const [key] of this.keys(email, address)) {
      const entry = this.failures.get(key);
      if (!entry || entry.resetAt <= now)
        this.failures.set(key, { count: 1, resetAt: now + this.limits.windowMs });
      else entry.count += 1;
    }
  }

  succeeded(email: string): void {
    this.failures.delete(`email:${email}`);
  }

  private keys(email: string, address: string): [string, number][] {
    return [
      [`email:${email}`, this.limits.perEmail],
      [`address:${address}`, this.limits.perAddress],
    ];
  }

  /** Drops expired windows now and then, so the map stays as small as the recent attackers. */
  private sweep(now: number): void {
    if (this.failures.size < 10_000) return;
    for (const [key, entry] of this.failures) if (entry.resetAt <= now) this.failures.delete(key);
  }
}
