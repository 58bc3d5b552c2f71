import { describe, expect, it } from "vitest";
import { emptyUntil, take, waitForToken, WRITE_BUDGETS, type BucketState } from "../../src/core/tokenBucket";

const spec = WRITE_BUDGETS.scaleSetUpdate; // 12, then 4 a minute

describe("token bucket", () => {
  it("lets a burst of 12 through, then one every 15 s", () => {
    let s: BucketState = { tokens: spec.capacity, at: 0 };
    for (let i = 0; i < 12; i++) {
      expect(waitForToken(spec, s, 0)).toBe(0);
      s = take(spec, s, 0);
    }
    expect(waitForToken(spec, s, 0)).toBe(15_000);
    expect(waitForToken(spec, s, 10_000)).toBe(5_000);
    s = take(spec, s, 15_000);
    expect(waitForToken(spec, s, 15_000)).toBe(15_000);
  });

  it("never holds more than its capacity", () => {
    const s = { tokens: 0, at: 0 };
    const later = take(spec, s, 3_600_000);
    expect(later.tokens).toBe(spec.capacity - 1);
  });

  it("stays closed until Retry-After has passed after a 429, then lets exactly one through", () => {
    let s = emptyUntil(30_000);
    expect(waitForToken(spec, s, 0)).toBe(30_000);
    expect(waitForToken(spec, s, 29_000)).toBe(1_000);
    expect(waitForToken(spec, s, 30_000)).toBe(0);
    s = take(spec, s, 30_000);
    expect(waitForToken(spec, s, 30_000)).toBe(15_000);
  });
});
