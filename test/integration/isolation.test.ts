import { afterEach, describe, expect, it } from "vitest";
import { QUEUE_DECLARER } from "../../src/core/declarations";
import { manualClock, startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";
import { instanceNics, modelNics, poolsByIpConfig } from "../../sim/wire";
import { poolId, scaleSetId, WIDE_SUBSCRIPTION, wideWorld } from "../../devkit/worlds";

/**
 * One bad declaration fails alone: a pool of a load balancer that does not exist makes ARM answer 400
 * InvalidResourceReference to the write that carries it, and that write carries every intent of the scale set.
 * The reconcile bisects; the good declarations apply, the bad one fails with ARM's reason and waits for its retry
 * time; the timer retries it then, once, and moves its retry time on when it fails again.
 */

const VMSS = scaleSetId(WIDE_SUBSCRIPTION, "wide", "vmss-0");
const ref = scaleSetRef(VMSS);
const GOOD = Array.from({ length: 6 }, (_, i) => poolId(WIDE_SUBSCRIPTION, "wide", "lb", `pool-${i}`));
const GHOST = poolId(WIDE_SUBSCRIPTION, "wide", "no-such-lb", "pool");

describe("failure isolation", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it("a pool ARM refuses fails alone with ARM's reason; the other six apply to the model and every instance", async () => {
    const clock = manualClock(Date.now());
    h = await startHarness({
      clock,
      sim: { seed: wideWorld({ scaleSets: 1, capacity: 2, pools: 6 }) },
      env: { POOLSYNC_SCOPES: `/subscriptions/${WIDE_SUBSCRIPTION}`, POOLSYNC_FAILED_RETRY_SECONDS: "300" },
    });
    const declared = [...GOOD.slice(0, 3), GHOST, ...GOOD.slice(3)];
    for (const [i, pool] of declared.entries()) {
      await h.services.declarations.upsert(ref, {
        scaleSetId: VMSS,
        backendPoolId: pool,
        ipConfiguration: "",
        state: "present",
        declaredAt: new Date(clock.now()).toISOString(),
        requestId: `r-${i}`,
        declaredBy: QUEUE_DECLARER,
      });
    }
    const started = clock.now();
    const report = await h.services.reconcile(ref, { reason: "test", attempt: 0 });
    expect(report.result).toBe("applied");

    const byPool = new Map((await h.services.declarations.listForTarget(ref)).map((d) => [d.backendPoolId, d]));
    for (const pool of GOOD) expect(byPool.get(pool)?.outcome.kind, pool).toBe("applied");
    const ghost = byPool.get(GHOST)!;
    // Recorded the moment its own write failed, during the pass.
    expect(ghost.outcome.kind).toBe("failed");
    expect(Date.parse(ghost.outcome.retryAt!)).toBeGreaterThanOrEqual(started + 300_000);
    expect(Date.parse(ghost.outcome.retryAt!)).toBeLessThanOrEqual(clock.now() + 300_000);
    expect(ghost.outcome.reason).toMatch(
      /^FatalError: PUT .*: 400 InvalidResourceReference Resource .*no-such-lb.* was not found/,
    );
    expect(ghost.attempts).toBe(1);

    const c = h.sim.control;
    const wanted = GOOD.map((p) => p.toLowerCase()).sort();
    expect([...poolsByIpConfig(modelNics(c.resource(VMSS)!)).ipConfig0!].sort()).toEqual(wanted);
    for (const vm of c.instances(VMSS))
      expect([...poolsByIpConfig(instanceNics(vm)).ipConfig0!].sort()).toEqual(wanted);
    // 7 intents, 1 bad: the whole write, then halves down to the bad one (about 2·log2(7) writes), never one each.
    expect(c.stats(VMSS).puts).toBeLessThanOrEqual(6);

    // Until its retry time, the failed declaration is left out: another reconcile writes nothing at all.
    const putsBefore = c.stats(VMSS).puts;
    expect(await h.services.reconcile(ref, { reason: "test: an event", attempt: 0 })).toMatchObject({
      result: "unchanged",
      armWrites: 0,
    });
    expect(c.stats(VMSS).puts).toBe(putsBefore);

    // The timer leaves it alone until then (a second before it: the pass's operation polls moved the clock after the
    // failure was recorded, by as many seconds as the load made polls) ...
    clock.advance(Date.parse(ghost.outcome.retryAt!) - clock.now() - 1_000);
    expect(await h.services.reconcileStale()).toMatchObject({ enqueued: 0 });
    // ... retries it once its time has come; failing again moves the time on, so the next run does not repeat it.
    clock.advance(2_000);
    expect(await h.services.reconcileStale()).toMatchObject({ enqueued: 1 });
    await h.drain();
    const again = (await h.services.declarations.listForTarget(ref)).find((d) => d.backendPoolId === GHOST)!;
    expect(again.outcome.kind).toBe("failed");
    expect(again.attempts).toBe(2);
    expect(Date.parse(again.outcome.retryAt!)).toBe(clock.now() + 300_000);
    expect(await h.services.reconcileStale()).toMatchObject({ enqueued: 0 });
  });
});
