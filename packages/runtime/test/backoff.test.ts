import { backoffDelay } from "../src/backoff.ts";

describe("backoffDelay", () => {
  const random = Math.random;
  afterEach(() => {
    Math.random = random;
  });

  it("starts at the base and doubles with each attempt, up to the cap", () => {
    const delays = [1, 2, 3, 4, 5, 6, 7, 8].map((attempt) =>
      backoffDelay(attempt, { baseMs: 200, maxMs: 10_000 }),
    );
    expect(delays).toEqual([200, 400, 800, 1_600, 3_200, 6_400, 10_000, 10_000]);
    expect(backoffDelay(100, { baseMs: 1_000, maxMs: 60_000 })).toBe(60_000);
  });

  it("with jitter, waits between half and all of the doubled delay, in whole milliseconds", () => {
    Math.random = () => 0;
    expect(backoffDelay(3, { baseMs: 250, maxMs: 5_000, jitter: true })).toBe(500);
    Math.random = () => 0.999_999;
    expect(backoffDelay(3, { baseMs: 250, maxMs: 5_000, jitter: true })).toBe(1_000);
    Math.random = () => 0.5;
    expect(backoffDelay(10, { baseMs: 250, maxMs: 5_000, jitter: true })).toBe(3_750);
    Math.random = random;
    for (let i = 0; i < 100; i++) {
      const delay = backoffDelay(2, { baseMs: 7, maxMs: 5_000, jitter: true });
      expect(Number.isInteger(delay) && delay >= 7 && delay <= 14).toBe(true);
    }
  });
});
