import { afterEach, describe, expect, it } from "vitest";
import { DEMO, startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";
import { declareOn } from "../support/declareOn";

const declare = (state: "present" | "absent", i: number) => ({
  v: 1,
  kind: "declare",
  scaleSetId: DEMO.scaleSetId,
  backendPoolId: DEMO.poolId,
  state,
  requestId: `toggle-${i}`,
});

/** 13 model writes in a row on one scale set: CRP's bucket holds 12. */
async function toggle13(h: Harness) {
  const reports = [];
  for (let i = 0; i < 13; i++) {
    await h.send(declare(i % 2 ? "absent" : "present", i));
    const [outcome] = await h.drain();
    if (outcome?.result === "reconciled") reports.push(outcome.report);
  }
  return reports;
}

describe("write pacing inside CRP's budget", () => {
  let h: Harness;
  afterEach(async () => {
    await h.stop();
  });

  // CRP's answers name its buckets either way (issue 25): the pacing holds under both.
  it.each(["windows", "resourceSubscription"] as const)(
    "defers the 13th quick write to one scale set instead of earning a 429 (bucket names: %s)",
    async (names) => {
      h = await startHarness({
        sim: { throttling: true, rateLimitPolicyNames: names },
        env: { POOLSYNC_GATHER_MILLISECONDS: "0" },
      });
      const started = h.sim.control.clock.now();
      const reports = await toggle13(h);
      expect(h.sim.control.stats()).toMatchObject({ status429: 0 });
      // A 412 (CRP's ETag bump seconds after our instance writes) spends a token too, so which toggle waits depends on
      // timing; that one waits, and no more PUTs went out than the bucket's 12 and what it refilled meanwhile (4 a
      // minute: a loaded machine took over a minute for the 13 toggles once, and the 13th then went out in budget).
      // CRP refills a whole minute's tokens at each minute since the bucket's first request (sim/throttle.ts).
      const refills = Math.floor((h.sim.control.clock.now() - started) / 60_000);
      expect(h.sim.control.stats(DEMO.scaleSetId).puts).toBeLessThanOrEqual(12 + 4 * refills);
      const deferred = reports.find((r) => r.result === "requeued" && r.reason?.includes("pacing: write budget"));
      // Within one minute nothing refilled, so the 13th waited.
      if (refills === 0) expect(deferred?.requeueAfterMs).toBeGreaterThan(10_000);
    },
  );

  it("a pass sent back by a spent write budget takes that budget before it reads: still spent, it comes back unread", async () => {
    h = await startHarness({ sim: { throttling: true }, env: { POOLSYNC_GATHER_MILLISECONDS: "0" } });
    const ref = scaleSetRef(DEMO.scaleSetId);
    await h.send(declare("present", 0));
    await h.drain();
    // CRP answers the absent's model write 429 for two minutes: the pacer learns the scale set's budget is spent.
    h.sim.control.injectFault({
      method: "PUT",
      path: "virtualMachineScaleSets/etag-k8s-mp-0$",
      retryAfterSeconds: 120,
    });
    await declareOn(h, ref)(DEMO.poolId, "absent");
    const throttled = await h.services.reconcile(ref, { reason: "declare absent", attempt: 0 });
    expect(throttled).toMatchObject({ result: "requeued", throttles: 1 });
    // Its retry reads (it owes no budget by name), then meets the spent budget before its write.
    const paced = await h.services.reconcile(ref, {
      reason: `retry after: ${throttled.reason}`,
      attempt: 1,
      fresh: true,
    });
    expect(paced).toMatchObject({ result: "requeued", reason: expect.stringMatching(/^pacing: write budget of /) });
    expect(paced.armReads).toBeGreaterThan(0);
    // The next retry owes that budget: while it is spent, no read at all, however fresh the pass was asked to be.
    const before = h.sim.control.stats(DEMO.scaleSetId);
    const unread = await h.services.reconcile(ref, { reason: `retry after: ${paced.reason}`, attempt: 2, fresh: true });
    expect(unread).toMatchObject({ result: "requeued", armReads: 0, armWrites: 0 });
    expect(unread.requeueAfterMs).toBeGreaterThan(60_000);
    expect(h.sim.control.stats(DEMO.scaleSetId)).toMatchObject({ gets: before.gets, puts: before.puts });
  });

  it("(control) without pacing the same sequence runs into CRP's 429", async () => {
    h = await startHarness({
      sim: { throttling: true },
      env: { POOLSYNC_GATHER_MILLISECONDS: "0", POOLSYNC_PACING_ENABLED: "false" },
    });
    await toggle13(h);
    expect(h.sim.control.stats().status429).toBeGreaterThan(0);
  });
});
