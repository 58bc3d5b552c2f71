import { afterEach, describe, expect, it } from "vitest";
import { ReadPacer } from "../../src/azure/readPacing";
import { QUEUE_DECLARER } from "../../src/core/declarations";
import { manualClock, startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";
import { modelNics, poolsByIpConfig } from "../../sim/wire";
import { poolId, scaleSetId, WIDE_SUBSCRIPTION, wideWorld } from "../../devkit/worlds";

/**
 * A pass at its last attempt (POOLSYNC_MAX_ATTEMPTS), from issue 42's slow wide burst, where ten passes gave up with 90
 * declarations left `pending`:
 * - one that gives up after its model write went through (the instance LISTs kept failing): the model holds the pool,
 *   the instances do not. The declaration is not applied, and must not stay `pending` with nothing doing it
 *   (invariant 3): it ends failed, with the give-up's reason, for the timer's retry;
 * - one whose read poolsync's own pacing held until the request's deadline (operation polls had spent ARM's read
 *   bucket): that is a wait, not a failure, and comes back whatever the count.
 */

const VMSS = scaleSetId(WIDE_SUBSCRIPTION, "wide", "vmss-0");
const ref = scaleSetRef(VMSS);
const POOL = poolId(WIDE_SUBSCRIPTION, "wide", "lb", "pool-0");

async function declarePool(h: Harness, now: number): Promise<void> {
  await h.services.declarations.upsert(ref, {
    scaleSetId: VMSS,
    backendPoolId: POOL,
    ipConfiguration: "",
    state: "present",
    declaredAt: new Date(now).toISOString(),
    requestId: "r-0",
    declaredBy: QUEUE_DECLARER,
  });
}

describe("a pass at its last attempt", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it("fails a declaration the model already holds with the give-up's reason, instead of leaving it pending", async () => {
    const clock = manualClock(Date.now());
    h = await startHarness({
      clock,
      sim: { seed: wideWorld({ scaleSets: 1, capacity: 2, pools: 1 }) },
      env: { POOLSYNC_SCOPES: `/subscriptions/${WIDE_SUBSCRIPTION}`, POOLSYNC_MAX_ATTEMPTS: "1" },
    });
    await declarePool(h, clock.now());
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

  it("comes back, not gives up, when its read was held by our own pacing until the request's deadline", async () => {
    h = await startHarness({
      sim: { seed: wideWorld({ scaleSets: 1, capacity: 2, pools: 1 }) },
      env: {
        POOLSYNC_SCOPES: `/subscriptions/${WIDE_SUBSCRIPTION}`,
        POOLSYNC_MAX_ATTEMPTS: "1",
        POOLSYNC_ARM_TIMEOUT_SECONDS: "1",
        POOLSYNC_PACING_MAX_WAIT_SECONDS: "600",
      },
    });
    await declarePool(h, Date.now());
    // ARM's read bucket spent for two minutes: longer than a request may wait (1 s), shorter than the pacer may.
    const pacer = (h.services.compute as unknown as { readPacer: ReadPacer }).readPacer;
    pacer.throttled(WIDE_SUBSCRIPTION, 120_000);
    const before = h.sim.control.stats().requests;

    const last = await h.services.reconcile(ref, { reason: "test: requeued", attempt: 1 });
    expect(last).toMatchObject({ result: "requeued", reason: expect.stringMatching(/^pacing: .*request's deadline/) });
    expect(last.requeueAfterMs).toBeGreaterThan(100_000);
    expect(h.sim.control.stats().requests).toBe(before);
    const [d] = await h.services.declarations.listForTarget(ref);
    expect(d?.outcome.kind).toBe("pending");
  });
});
