import { afterEach, describe, expect, it } from "vitest";
import { QUEUE_DECLARER } from "../../src/core/declarations";
import { manualClock, startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";
import { modelNics, poolsByIpConfig } from "../../sim/wire";
import { poolId, scaleSetId, WIDE_SUBSCRIPTION, wideWorld } from "../../devkit/worlds";

/**
 * A pass that gives up after its model write went through (issue 42's slow wide burst: the instance LISTs kept
 * failing). The model holds the pool, the instances do not: the declaration is not applied, and it must not stay
 * `pending` with nothing doing it (invariant 3). It ends failed, with the give-up's reason, for the timer's retry.
 */

const VMSS = scaleSetId(WIDE_SUBSCRIPTION, "wide", "vmss-0");
const ref = scaleSetRef(VMSS);
const POOL = poolId(WIDE_SUBSCRIPTION, "wide", "lb", "pool-0");

describe("a pass that gives up once the model holds the pool", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it("fails the declaration with the give-up's reason instead of leaving it pending", async () => {
    const clock = manualClock(Date.now());
    h = await startHarness({
      clock,
      sim: { seed: wideWorld({ scaleSets: 1, capacity: 2, pools: 1 }) },
      env: { POOLSYNC_SCOPES: `/subscriptions/${WIDE_SUBSCRIPTION}`, POOLSYNC_MAX_ATTEMPTS: "1" },
    });
    await h.services.declarations.upsert(ref, {
      scaleSetId: VMSS,
      backendPoolId: POOL,
      ipConfiguration: "",
      state: "present",
      declaredAt: new Date(clock.now()).toISOString(),
      requestId: "r-0",
      declaredBy: QUEUE_DECLARER,
    });
    // Every LIST of the scale set's instances fails as a server error would: the model write goes through, the
    // instances are never reached.
    h.sim.control.injectFault({ method: "GET", path: /vmss-0\/virtualMachines$/i, times: Infinity, status: 500 });

    const first = await h.services.reconcile(ref, { reason: "test", attempt: 0 });
    expect(first.result).toBe("requeued");
    expect(poolsByIpConfig(modelNics(h.sim.control.resource(VMSS)!)).ipConfig0).toContain(POOL.toLowerCase());

    const last = await h.services.reconcile(ref, { reason: "test: requeued", attempt: 1 });
    expect(last).toMatchObject({ result: "failed", reason: expect.stringMatching(/^gave up after 1 re-enqueued/) });
    const [d] = await h.services.declarations.listForTarget(ref);
    expect(d?.outcome).toMatchObject({ kind: "failed", reason: last.reason });
  });
});
