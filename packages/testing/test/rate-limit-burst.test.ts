import { rateLimitBursts } from "../src/rate-limit-burst.ts";

/**
 * rateLimitBursts against a simulated fixed-window limiter (rate-limiter-flexible's kind: a window
 * opens at the first request after the last one closed) on a simulated clock, so the time a burst
 * takes is chosen, not measured.
 */
class FixedWindow {
  private opened = -Infinity;
  private used = 0;
  constructor(
    private readonly limit: number,
    private readonly windowMs = 1000,
  ) {}
  consume(at: number): boolean {
    if (at >= this.opened + this.windowMs) {
      this.opened = at;
      this.used = 0;
    }
    this.used += 1;
    return this.used <= this.limit;
  }
}

/** A burst over two replicas whose i-th request reaches its limiter at `start + i × stepMs`. */
function burstOver(replicas: FixedWindow[][], clock: { t: number }, stepsMs: number[]) {
  let attempt = 0;
  return () => {
    const [a, b] = replicas[attempt % replicas.length]!;
    const stepMs = stepsMs[Math.min(attempt, stepsMs.length - 1)]!;
    attempt += 1;
    const start = clock.t;
    return Promise.resolve((i: number) => {
      clock.t = start + i * stepMs;
      const allowed = (i % 2 === 0 ? a! : b!).consume(clock.t);
      return Promise.resolve(new Response(null, { status: allowed ? 200 : 429 }));
    });
  };
}

it("catches counts kept per replica in a burst of 825 ms, which the bound it replaced let pass", async () => {
  const clock = { t: 0 };
  const perReplica = [[new FixedWindow(5), new FixedWindow(5)]];
  const [burst] = await rateLimitBursts(burstOver(perReplica, clock, [75]), { now: () => clock.t });
  expect(burst).toMatchObject({ elapsedMs: 825, windows: 1, allowed: 10 });
  // The check the e2e suites make: 5 for each window the burst could span.
  expect(burst!.allowed > 5 * burst!.windows).toBe(true);
  // The bound it replaced (5 under 800 ms, else 10) passed it.
  expect(burst!.allowed <= (burst!.elapsedMs < 800 ? 5 : 10)).toBe(true);
});

it("holds a shared count to 5 in a burst within one window", async () => {
  const clock = { t: 0 };
  const shared = new FixedWindow(5);
  const bursts = await rateLimitBursts(burstOver([[shared, shared]], clock, [75]), { now: () => clock.t });
  expect(bursts.map((b) => [b.windows, b.allowed])).toEqual([[1, 5]]);
});

it("counts two windows for a burst of 1.1 s, and tries again until a burst fits in one", async () => {
  const clock = { t: 0 };
  const accounts = [0, 1, 2].map(() => {
    const shared = new FixedWindow(5);
    return [shared, shared];
  });
  const bursts = await rateLimitBursts(burstOver(accounts, clock, [100, 100, 20]), { now: () => clock.t });
  expect(bursts.map((b) => [b.elapsedMs, b.windows, b.allowed])).toEqual([
    [1100, 2, 7],
    [1100, 2, 7],
    [220, 1, 5],
  ]);
});

it("stops after `attempts` bursts that each span more than one window", async () => {
  const clock = { t: 0 };
  const shared = new FixedWindow(5);
  const bursts = await rateLimitBursts(burstOver([[shared, shared]], clock, [200]), {
    attempts: 2,
    now: () => clock.t,
  });
  expect(bursts.map((b) => b.windows)).toEqual([3, 3]);
});
