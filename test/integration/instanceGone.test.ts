import { afterEach, describe, expect, it } from "vitest";
import { QUEUE_DECLARER } from "../../src/core/declarations";
import type { ArmSimulatorOptions } from "../../sim";
import { instanceNics, modelNics, poolsByIpConfig } from "../../sim/wire";
import { manualClock, startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";
import { poolId, scaleSetId, WIDE_SUBSCRIPTION, wideWorld } from "../../devkit/worlds";

/**
 * A routine scale-in during a reconcile (issue 25): the instance poolsync is about to write is on its way out, or
 * gone, when its PUT arrives. CRP answers 400 InvalidParameter "The provided instanceId N is not an active Virtual
 * Machine Scale Set VM instanceId." (or, while its delete runs, 409 "marked for deletion"): the instance is gone, not
 * a bad declaration. The reconcile skips it, every declaration is applied on the rest, and no failure isolation (the
 * bisecting rewrites a 400 would start) nor retry is spent on it.
 */

const VMSS = scaleSetId(WIDE_SUBSCRIPTION, "wide", "vmss-0");
const ref = scaleSetRef(VMSS);
const POOLS = [0, 1].map((i) => poolId(WIDE_SUBSCRIPTION, "wide", "lb", `pool-${i}`));
const LAST = `${VMSS}/virtualMachines/2`;

describe("an instance scaled in under the reconcile is gone, not a failure", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  const cases: Array<{ name: string; sim: ArmSimulatorOptions; ended: boolean }> = [
    { name: "400 'not an active instanceId' while its delete runs", sim: {}, ended: false },
    { name: "400 'not an active instanceId' once it is gone", sim: {}, ended: true },
    {
      name: "409 'marked for deletion' while its delete runs",
      sim: { deletingInstanceWrite: "markedForDeletion409" },
      ended: false,
    },
  ];

  for (const c of cases) {
    it(c.name, async () => {
      const clock = manualClock(Date.now());
      h = await startHarness({
        clock,
        sim: { seed: wideWorld({ scaleSets: 1, capacity: 3, pools: 2 }), ...c.sim },
        env: { POOLSYNC_SCOPES: `/subscriptions/${WIDE_SUBSCRIPTION}`, POOLSYNC_FAILED_RETRY_SECONDS: "300" },
      });
      const sim = h.sim.control;
      // Another writer scales in just before our PUT to the highest instance reaches CRP.
      const scaleIn = sim.beforeNextWrite(LAST, () => {
        // Our writes to the other instances end first: a scale set write meets them with 409 otherwise (the other
        // writer meets CRP's rules as we do).
        sim.settle();
        sim.scale(VMSS, 2);
        if (c.ended) sim.clock.advance(60_000);
      });
      for (const [i, pool] of POOLS.entries()) {
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
      const report = await h.services.reconcile(ref, { reason: "test", attempt: 0 });
      expect(scaleIn.applied()).toBe(1);
      expect(report.result).toBe("applied");
      for (const d of await h.services.declarations.listForTarget(ref))
        expect(d.outcome, d.backendPoolId).toMatchObject({ kind: "applied" });

      const wanted = POOLS.map((p) => p.toLowerCase()).sort();
      expect([...poolsByIpConfig(modelNics(sim.resource(VMSS)!)).ipConfig0!].sort()).toEqual(wanted);
      for (const id of ["0", "1"])
        expect(
          [...poolsByIpConfig(instanceNics(sim.resource(`${VMSS}/virtualMachines/${id}`)!)).ipConfig0!].sort(),
        ).toEqual(wanted);
      // One PUT to the instance that went, and no bisecting rewrites of the others.
      expect(sim.stats(LAST).instancePuts).toBe(1);
      expect(sim.stats(VMSS)).toMatchObject({ puts: 1, instancePuts: 3 });
      // Nothing waits for a retry: the timer finds nothing to do.
      expect(await h.services.reconcileStale()).toMatchObject({ enqueued: 0 });
    });
  }
});
