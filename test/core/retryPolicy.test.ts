import { describe, expect, it } from "vitest";
import { mapLimit, preconditionBackoffMs, requeueBackoffMs } from "../../src/core/retryPolicy";

describe("retry policy", () => {
  it("waits short after a 412, doubling per attempt up to 2 s, jittered between half and one and a half times", () => {
    expect(preconditionBackoffMs(0, () => 0.5)).toBe(100);
    expect(preconditionBackoffMs(3, () => 0.5)).toBe(800);
    expect(preconditionBackoffMs(10, () => 0.5)).toBe(2_000);
    expect(preconditionBackoffMs(1, () => 0)).toBe(100);
    expect(preconditionBackoffMs(1, () => 0.999)).toBe(300);
  });

  it("requeues after 5 s, 10 s, 20 s … and never later than 10 minutes", () => {
    expect([0, 1, 2, 3].map(requeueBackoffMs)).toEqual([5_000, 5_000, 10_000, 20_000]);
    expect(requeueBackoffMs(8)).toBe(600_000);
    expect(requeueBackoffMs(50)).toBe(600_000);
  });

  it("runs every item with no more than the limit in flight", async () => {
    let inFlight = 0;
    let most = 0;
    const done: number[] = [];
    await mapLimit([1, 2, 3, 4, 5, 6, 7], 3, async (n) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await Promise.resolve();
      await Promise.resolve();
      done.push(n);
      inFlight--;
    });
    expect(done.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(most).toBe(3);
  });

  it("starts nothing new after the first error, and rethrows that error", async () => {
    const started: number[] = [];
    const run = mapLimit([1, 2, 3, 4, 5], 2, async (n) => {
      started.push(n);
      await Promise.resolve();
      if (n === 2) throw new Error("boom on 2");
    });
    await expect(run).rejects.toThrow("boom on 2");
    expect(started).toEqual([1, 2, 3]);
  });
});
