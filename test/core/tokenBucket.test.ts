import { describe, expect, it } from "vitest";
import { emptyUntil, take, waitForToken, WRITE_BUDGETS, type BucketState } from "../../src/core/tokenBucket";

const spec = WRITE_BUDGETS.scaleSetUpdate; // 12, then 4 at the end of each minute

describe("token bucket", () => {
  it("lets a burst of 12 through, then 4 more only when the minute is over", () => {
    let s: BucketState = { tokens: spec.capacity, at: 0 };
    for (let i = 0; i < 12; i++) {
      expect(waitForToken(spec, s, 0)).toBe(0);
      s = take(spec, s, 0);
    }
    expect(waitForToken(spec, s, 0)).toBe(60_000);
    expect(waitForToken(spec, s, 45_000)).toBe(15_000);
    for (let i = 0; i < 4; i++) {
      expect(waitForToken(spec, s, 60_000)).toBe(0);
      s = take(spec, s, 60_000);
    }
    expect(waitForToken(spec, s, 61_000)).toBe(59_000);
  });

  it("never holds more than its capacity", () => {
    expect(take(spec, { tokens: 0, at: 0 }, 3_600_000).tokens).toBe(spec.capacity - 1);
  });

  it("refills ARM's write bucket at ARM's own 10 a second, and keeps its margin in the capacity: 180 of 200", () => {
    const arm = WRITE_BUDGETS.armWrites;
    const s = { tokens: 0, at: 0 };
    expect(waitForToken(arm, s, 0)).toBe(100);
    expect(take(arm, s, 1_000).tokens).toBe(9);
    expect(arm.capacity).toBe(180);
  });

  it("stays closed until Retry-After has passed after a 429, then lets exactly one through", () => {
    let s = emptyUntil(30_000);
    expect(waitForToken(spec, s, 0)).toBe(30_000);
    expect(waitForToken(spec, s, 29_000)).toBe(1_000);
    expect(waitForToken(spec, s, 30_000)).toBe(0);
    s = take(spec, s, 30_000);
    expect(waitForToken(spec, s, 30_000)).toBe(60_000);
  });
});
