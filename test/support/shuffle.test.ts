import { describe, expect, it } from "vitest";
import { seededRandom } from "../../sim/random";
import { shuffled } from "./shuffle";

describe("shuffled (Fisher-Yates)", () => {
  it("gives every order of four items about as often (sort(() => rand() - 0.5) does not)", () => {
    const rand = seededRandom(7);
    const counts = new Map<string, number>();
    const runs = 24_000;
    for (let i = 0; i < runs; i++) {
      const key = shuffled(["a", "b", "c", "d"], rand).join("");
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    expect(counts.size).toBe(24);
    // 1,000 expected each; a binomial spread of ~31: 850-1150 is ~5 standard deviations either side.
    for (const n of counts.values()) {
      expect(n).toBeGreaterThan(850);
      expect(n).toBeLessThan(1150);
    }
  });

  it("keeps the input, and the same seed gives the same order", () => {
    const input = [1, 2, 3, 4, 5, 6, 7, 8];
    expect(shuffled(input, seededRandom(3))).toEqual(shuffled(input, seededRandom(3)));
    expect([...shuffled(input, seededRandom(3))].sort((a, b) => a - b)).toEqual(input);
    expect(input).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });
});
