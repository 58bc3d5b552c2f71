import { afterEach, describe, expect, it } from "vitest";
import { QUEUE_DECLARER } from "../../src/core/declarations";
import { statusReport } from "../../src/intake/statusReport";
import { manualClock, startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";
import { instanceNics, modelNics, poolsByIpConfig } from "../../sim/wire";
import { poolId, scaleSetId, WIDE_SUBSCRIPTION, wideWorld } from "../../devkit/worlds";

/**
 * Failure isolation across passes (issue 26): what a pass learns is recorded the moment it is known, the bisection's
 * writes per pass are bounded, a stop never marks failed what went through, and one instance ARM refuses is that
 * instance's problem, not the declarations'.
 */

const VMSS = scaleSetId(WIDE_SUBSCRIPTION, "wide", "vmss-0");
const ref = scaleSetRef(VMSS);
const GOOD = Array.from({ length: 6 }, (_, i) => poolId(WIDE_SUBSCRIPTION, "wide", "lb", `pool-${i}`));
const GHOSTS = Array.from({ length: 6 }, (_, i) => poolId(WIDE_SUBSCRIPTION, "wide", `no-such-lb-${i}`, "pool"));

describe("failure isolation across passes", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  async function declare(pools: string[], now: number) {
    for (const [i, pool] of pools.entries())
      await h!.services.declarations.upsert(ref, {
        scaleSetId: VMSS,
        backendPoolId: pool,
        ipConfiguration: "",
        state: "present",
        declaredAt: new Date(now).toISOString(),
        requestId: `r-${i}`,
        declaredBy: QUEUE_DECLARER,
      });
  }

  it("six bad pools: a pass spends a bounded number of writes, keeps what it learnt across requeues, and giving up fails none of the good ones", async () => {
    const clock = manualClock(Date.now());
    h = await startHarness({
      clock,
      sim: { seed: wideWorld({ scaleSets: 1, capacity: 2, pools: 6 }) },
      env: {
        POOLSYNC_SCOPES: `/subscriptions/${WIDE_SUBSCRIPTION}`,
        POOLSYNC_FAILED_RETRY_SECONDS: "300",
        POOLSYNC_MAX_ATTEMPTS: "1",
      },
    });
    // Interleaved, so that every half of the bisection holds a bad one.
    await declare(
      GOOD.flatMap((g, i) => [g, GHOSTS[i]!]),
      clock.now(),
    );
    const c = h.sim.control;
    const first = await h.services.reconcile(ref, { reason: "test", attempt: 0 });
    expect(first.result).toBe("requeued");
    // The whole write and at most 16 of the bisection's.
    expect(c.stats(VMSS).puts).toBeLessThanOrEqual(17);
    const afterFirst = await h.services.declarations.listForTarget(ref);
    const failedFirst = afterFirst.filter((d) => d.outcome.kind === "failed");
    // Recorded in the pass that found them, though it ended in a requeue: each a bad pool, none a good one.
    expect(failedFirst.length).toBeGreaterThan(0);
    for (const d of failedFirst) expect(GHOSTS).toContain(d.backendPoolId);

    // The next attempt (the last one allowed), once the scale set's write budget has refilled (a pass sent back only
    // for it does not give up), skips them; whatever it cannot finish, it never marks a good pool failed.
    clock.advance(3 * 60_000);
    h.sim.control.clock.advance(3 * 60_000);
    await h.services.reconcile(ref, { reason: "test: requeued", attempt: 1 });
    const byPool = new Map((await h.services.declarations.listForTarget(ref)).map((d) => [d.backendPoolId, d]));
    for (const pool of GOOD) expect(byPool.get(pool)?.outcome.kind, pool).not.toBe("failed");
    for (const d of failedFirst) expect(byPool.get(d.backendPoolId)?.attempts, d.backendPoolId).toBe(1);
    expect(GHOSTS.filter((g) => byPool.get(g)?.outcome.kind === "failed").length).toBeGreaterThan(failedFirst.length);
  });

  it("an instance ARM refuses (a dangling NSG in its own configuration) is recorded on that instance; the declarations stay applied on the rest", async () => {
    const clock = manualClock(Date.now());
    h = await startHarness({
      clock,
      sim: { seed: wideWorld({ scaleSets: 1, capacity: 3, pools: 2 }) },
      env: { POOLSYNC_SCOPES: `/subscriptions/${WIDE_SUBSCRIPTION}` },
    });
    const c = h.sim.control;
    const [bad, ...rest] = c.instances(VMSS).map((i) => String(i.instanceId));
    c.injectFault({
      method: "PUT",
      path: new RegExp(`vmss-0/virtualMachines/${bad}$`, "i"),
      times: Infinity,
      status: 400,
      body: {
        error: {
          code: "InvalidResourceReference",
          message:
            "Resource /subscriptions/x/resourceGroups/wide/providers/Microsoft.Network/networkSecurityGroups/gone referenced by resource is not found.",
        },
      },
    });
    await declare(GOOD.slice(0, 2), clock.now());
    const report = await h.services.reconcile(ref, { reason: "test", attempt: 0 });
    expect(report.result).toBe("applied");
    expect(report.instanceFailures).toEqual([
      { instanceId: bad, reason: expect.stringMatching(/400 InvalidResourceReference .*networkSecurityGroups\/gone/) },
    ]);

    for (const d of await h.services.declarations.listForTarget(ref))
      expect(d.outcome.kind, d.backendPoolId).toBe("applied");
    const wanted = GOOD.slice(0, 2)
      .map((p) => p.toLowerCase())
      .sort();
    expect([...poolsByIpConfig(modelNics(c.resource(VMSS)!)).ipConfig0!].sort()).toEqual(wanted);
    for (const vm of c.instances(VMSS).filter((i) => rest.includes(String(i.instanceId))))
      expect([...poolsByIpConfig(instanceNics(vm)).ipConfig0!].sort()).toEqual(wanted);

    const s = await statusReport({ ...h.services, now: () => clock.now(), cacheTtlMs: h.config.cacheTtlMs });
    expect(s.recent.instanceFailures).toEqual([
      expect.objectContaining({
        scaleSetId: VMSS,
        instanceId: bad,
        reason: expect.stringMatching(/InvalidResourceReference/),
      }),
    ]);
  });
});
