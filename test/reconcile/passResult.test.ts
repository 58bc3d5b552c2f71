import { describe, expect, it } from "vitest";
import { ConflictError, FatalError, OWN_PACING, ThrottledError, TransientError } from "../../src/core/errors";
import { comeBack, comeBackOf, nextStep, reportFieldsOf } from "../../src/reconcile/passResult";

/** The one mapping from what a pass asks to what the queue does (pure). */
describe("nextStep", () => {
  const MAX = 3;

  it("a pass that asks nothing is done", () => {
    expect(nextStep([], 0, MAX)).toEqual({ kind: "done" });
    expect(nextStep([undefined], 5, MAX)).toEqual({ kind: "done" });
  });

  it("a failure comes back after its delay until POOLSYNC_MAX_ATTEMPTS, then gives up naming the count", () => {
    const failed = comeBack("retry", 4_000, "throttled: 429");
    expect(nextStep([failed], 0, MAX)).toEqual({
      kind: "requeue-after",
      delayMs: 4_000,
      reason: "throttled: 429",
      counted: true,
    });
    expect(nextStep([failed], MAX - 1, MAX)).toEqual({
      kind: "requeue-after",
      delayMs: 4_000,
      reason: "throttled: 429",
      counted: true,
    });
    expect(nextStep([failed], MAX, MAX)).toEqual({
      kind: "give-up",
      reason: `gave up after ${MAX} re-enqueued attempts: throttled: 429`,
    });
  });

  it("a wait (pacing, Network RP busy, a write in doubt) comes back whatever the count, and does not add to it", () => {
    const wait = comeBack("wait", 60_000, "pacing: write budget spent");
    expect(nextStep([wait], 100, MAX)).toEqual({
      kind: "requeue-after",
      delayMs: 60_000,
      reason: "pacing: write budget spent",
      counted: false,
    });
    // Its report says so: the runner numbers the next attempt as this one.
    expect(reportFieldsOf(nextStep([wait], 2, MAX))).toEqual({
      requeueAfterMs: 60_000,
      reason: "pacing: write budget spent",
      requeueWaits: true,
    });
    expect(reportFieldsOf(nextStep([comeBack("retry", 1_000, "transient")], 2, MAX))).not.toHaveProperty(
      "requeueWaits",
    );
  });

  it("a rollout check comes back while attempts last, then the pass just ends (no give-up)", () => {
    const recheck = comeBack("recheck", 30_000, "CRP is rolling the model out to the instances");
    expect(nextStep([recheck], MAX - 1, MAX)).toMatchObject({ kind: "requeue-after", delayMs: 30_000 });
    expect(nextStep([recheck], MAX, MAX)).toEqual({ kind: "done" });
  });

  it("several reasons come back together at the latest time, with the first's reason", () => {
    const doubt = comeBack("wait", 10_000, "doubt");
    const recheck = comeBack("recheck", 30_000, "rollout");
    expect(nextStep([doubt, recheck], 0, MAX)).toEqual({
      kind: "requeue-after",
      delayMs: 30_000,
      reason: "doubt",
      counted: true,
    });
    // Past the attempts the rollout check drops out; the doubt's wait stays, and alone it does not count.
    expect(nextStep([doubt, recheck], MAX, MAX)).toEqual({
      kind: "requeue-after",
      delayMs: 10_000,
      reason: "doubt",
      counted: false,
    });
  });
});

describe("comeBackOf: ARM's retriable answers", () => {
  it("a 429 honours Retry-After and counts; Network RP's RetryableError is a wait", () => {
    expect(comeBackOf(new ThrottledError("too many", 17_000), 0)).toEqual({
      cause: "retry",
      afterMs: 17_000,
      reason: "throttled: too many",
    });
    expect(comeBackOf(new ThrottledError("busy", 5_000, 429, "RetryableError"), 0)).toMatchObject({ cause: "wait" });
    // Held by poolsync's own read pacing, never sent: as the write pacer's holds are, a wait.
    expect(comeBackOf(new ThrottledError("reads are paced", 9_000, 429, OWN_PACING), 0)).toEqual({
      cause: "wait",
      afterMs: 9_000,
      reason: "pacing: reads are paced",
    });
  });

  it("a 409 AnotherOperationInProgress is a wait; another 409 counts", () => {
    expect(comeBackOf(new ConflictError("busy", 3_000, 409, "AnotherOperationInProgress"), 0)).toMatchObject({
      cause: "wait",
      afterMs: 3_000,
    });
    expect(comeBackOf(new ConflictError("other", 3_000, 409, "Conflict"), 0)).toMatchObject({ cause: "retry" });
  });

  it("a transient error backs off at least by attempt; a terminal one is not retried", () => {
    const t = comeBackOf(new TransientError("timeout", 0), 2);
    expect(t?.cause).toBe("retry");
    expect(t!.afterMs).toBeGreaterThan(0);
    expect(comeBackOf(new FatalError("400", 400), 0)).toBeUndefined();
  });
});
