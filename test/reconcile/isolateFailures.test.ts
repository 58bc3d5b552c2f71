import { describe, expect, it } from "vitest";
import { FatalError, ThrottledError } from "../../src/core/errors";
import { isolateFailures } from "../../src/reconcile/isolateFailures";

/** The bisection alone, over a write that refuses any set holding a bad item (as ARM refuses the whole PUT). */
function writer(
  bad: Set<number>,
  err = (i: number) => new FatalError(`403 LinkedAuthorizationFailed on ${i}`, 403, "LinkedAuthorizationFailed"),
) {
  const calls: number[][] = [];
  const write = async (indices: number[], state: number[]) => {
    calls.push(indices);
    const hit = indices.find((i) => bad.has(i));
    if (hit !== undefined) throw err(hit);
    return [...state, ...indices];
  };
  return { calls, write };
}

describe("isolateFailures", () => {
  it("fails exactly the items whose own write fails, with their own reason; every other item is written", async () => {
    const w = writer(new Set([2, 5]));
    const r = await isolateFailures(8, [] as number[], w.write);
    expect([...r.failed.entries()]).toEqual([
      [2, "FatalError: 403 LinkedAuthorizationFailed on 2"],
      [5, "FatalError: 403 LinkedAuthorizationFailed on 5"],
    ]);
    expect(r.state.sort()).toEqual([0, 1, 3, 4, 6, 7]);
    expect(w.calls.length).toBeLessThanOrEqual(1 + 2 * 2 * Math.ceil(Math.log2(8)));
  });

  it("one write when nothing fails", async () => {
    const w = writer(new Set());
    const r = await isolateFailures(5, [] as number[], w.write);
    expect(r.failed.size).toBe(0);
    expect(w.calls).toEqual([[0, 1, 2, 3, 4]]);
  });

  it("stops at an answer about the target rather than one item (429): it propagates, what was written stays", async () => {
    let n = 0;
    const write = async (indices: number[], state: number[]) => {
      n++;
      if (n === 1) throw new FatalError("400", 400);
      if (n === 3) throw new ThrottledError("429", 30_000);
      return [...state, ...indices];
    };
    await expect(isolateFailures(4, [] as number[], write)).rejects.toBeInstanceOf(ThrottledError);
    expect(n).toBe(3);
  });
});
