import type { Logger } from "@locus/runtime";

/**
 * What /readyz (and the CLI's status) reports: each dependency this process has built, by name,
 * "ok" while its check passes. A required one that fails is "unavailable" and takes the process
 * out of service; an optional one is "degraded" and the process stays ready (taking every replica
 * out of service for it would turn a degraded service into an outage).
 */
export class Readiness {
  private readonly checks = new Map<string, { check: () => Promise<void>; optional: boolean }>();

  constructor(private readonly logger: Logger) {}

  /** Adds (or replaces) the check of a dependency this process now depends on. */
  add(name: string, check: () => Promise<void>, options: { optional?: boolean } = {}): void {
    this.checks.set(name, { check, optional: options.optional ?? false });
  }

  /** Every dependency's state, checked now. */
  async report(): Promise<Record<string, string>> {
    const entries = await Promise.all(
      [...this.checks].map(async ([name, { check, optional }]) => {
        try {
          await check();
          return [name, "ok"] as const;
        } catch (err) {
          this.logger.warn({ err, dependency: name, optional }, "readiness check failed");
          return [name, optional ? "degraded" : "unavailable"] as const;
        }
      }),
    );
    return Object.fromEntries(entries);
  }
}
