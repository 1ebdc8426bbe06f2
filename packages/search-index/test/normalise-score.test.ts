import { normaliseScore } from "../src/search-index.ts";

describe("normaliseScore", () => {
  it("maps s to s / (1 + s)", () => {
    expect(normaliseScore(1)).toBe(0.5);
    expect(normaliseScore(3)).toBe(0.75);
    expect(normaliseScore(0.25)).toBeCloseTo(0.2);
  });

  it("maps zero, negative and NaN scores to 0", () => {
    expect(normaliseScore(0)).toBe(0);
    expect(normaliseScore(-5)).toBe(0);
    expect(normaliseScore(Number.NaN)).toBe(0);
  });

  it("stays below 1 for large scores", () => {
    for (const raw of [10, 1e3, 1e6, 1e12]) {
      const score = normaliseScore(raw);
      expect(score).toBeGreaterThan(0);
      expect(score).toBeLessThan(1);
    }
  });

  it("preserves order: a higher raw score never gives a lower normalised score", () => {
    const raws = [0, 1e-6, 0.01, 0.5, 1, 2, 7.5, 40, 1e4];
    const scores = raws.map(normaliseScore);
    for (let i = 1; i < scores.length; i++) expect(scores[i]!).toBeGreaterThan(scores[i - 1]!);
  });
});
