import { describe, expect, it } from "vitest";
import { percentile, spread } from "../../bench/stats";

describe("the benchmark's statistics", () => {
  it("takes the median over two runs as their mean, not the faster run alone", () => {
    // Two runs of the wide burst: a target of 42.2 s is not met by 42.2 and 45.2.
    expect(spread([45.2, 42.2]).median).toBeCloseTo(43.7, 6);
    expect(spread([3, 1, 2]).median).toBe(2);
    expect(spread([4, 1, 3, 2])).toMatchObject({ median: 2.5, min: 1, max: 4 });
    expect(spread([Number.POSITIVE_INFINITY, 5, 7]).median).toBe(6);
  });

  it("keeps percentiles within a run at nearest rank: a value some change showed", () => {
    expect(percentile([1, 2, 3, 4], 50)).toBe(2);
    expect(percentile([10, 20, 30], 99)).toBe(30);
  });
});
