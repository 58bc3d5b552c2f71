import { describe, expect, it } from "vitest";
import { FatalError, ThrottledError } from "../../src/core/errors";
import { isolateFailures, ISOLATION_REQUEUE_MS } from "../../src/reconcile/isolateFailures";
import { comeBack } from "../../src/reconcile/passResult";

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
    return { state: [...state, ...indices] };
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
      return { state: [...state, ...indices] };
    };
    await expect(isolateFailures(4, [] as number[], write)).rejects.toBeInstanceOf(ThrottledError);
    expect(n).toBe(3);
  });

  it("a write that comes back stops the isolation with it: nothing more is written, what was found stays", async () => {
    let n = 0;
    const write = async (indices: number[], state: number[]) => {
      n++;
      if (n === 1) throw new FatalError("400", 400);
      if (n === 2) return { state: [...state, ...indices] };
      return { comeBack: comeBack("wait", 5_000, "pacing: test") };
    };
    const r = await isolateFailures(4, [] as number[], write);
    expect(r.comeBack).toEqual({ cause: "wait", afterMs: 5_000, reason: "pacing: test" });
    expect(r.state).toEqual([0, 1]);
    expect(n).toBe(3);
  });

  it("a spent bisection budget comes back as a counted retry instead of writing on", async () => {
    const w = writer(new Set([0, 3]));
    const r = await isolateFailures(4, [] as number[], w.write, { budget: { left: 2 } });
    expect(r.comeBack).toMatchObject({ cause: "retry", afterMs: ISOLATION_REQUEUE_MS });
    // The whole, its first half, 0 alone (found failing); 1 would be the third bisection write.
    expect(w.calls).toEqual([[0, 1, 2, 3], [0, 1], [0]]);
    expect([...r.failed.keys()]).toEqual([0]);
  });
});
