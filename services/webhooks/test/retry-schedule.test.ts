import { loadConfig } from "@locus/runtime";
import { RetrySchedule } from "../src/retry-schedule.ts";

describe("webhook retry schedule", () => {
  it("by default retries seven times over about a day, as Standard Webhooks (Svix) does", () => {
    const schedule = new RetrySchedule(loadConfig({}).webhooks.retryScheduleMs);
    expect(schedule.maxAttempts).toBe(8);
    const hours = schedule.spanMs / 3_600_000;
    expect(hours).toBeGreaterThan(24);
    expect(hours).toBeLessThan(30);
  });

  it("waits the n-th wait after the n-th failed attempt, spread by at most a tenth, and stops after the last", () => {
    const schedule = new RetrySchedule([1000, 60_000, 3_600_000]);
    const now = new Date("2026-01-01T00:00:00.000Z");
    const after = (attempt: number, random: number) =>
      schedule.nextAttemptAt(attempt, schedule.maxAttempts, now, () => random)?.getTime() ?? null;
    expect(after(1, 0.5)).toBe(now.getTime() + 1000);
    expect(after(2, 0.5)).toBe(now.getTime() + 60_000);
    expect(after(3, 0)).toBe(now.getTime() + 3_600_000 * 0.9);
    expect(after(3, 1)).toBe(now.getTime() + 3_600_000 * 1.1);
    expect(after(4, 0.5)).toBeNull();
    // A redelivery allows one attempt more than were made: when it fails, nothing follows.
    expect(schedule.nextAttemptAt(6, 6, now)).toBeNull();
  });

  it("the setting refuses waits that are not seconds", () => {
    expect(() => loadConfig({ LOCUS_WEBHOOK_RETRY_SCHEDULE_S: "5,soon" })).toThrow(
      /LOCUS_WEBHOOK_RETRY_SCHEDULE_S/,
    );
    expect(loadConfig({ LOCUS_WEBHOOK_RETRY_SCHEDULE_S: "0.5, 2" }).webhooks.retryScheduleMs).toEqual([
      500, 2000,
    ]);
  });
});
