import { afterEach, describe, expect, it } from "vitest";
import { QUEUE_DECLARER } from "../../src/core/declarations";
import { dropPool, instanceNics, poolsByIpConfig } from "../../sim/wire";
import { DEMO, manualClock, startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";

/**
 * Deletes that fail, and deletes nobody told us about, over Azurite, the simulator and the real SDK (events off: the
 * timer is all there is). A delete whose operation ends Failed leaves the resource in place and writable, Failed, as
 * CRP does; poolsync must keep its declarations on it. A delete that succeeded with its event lost shows as
 * `target-deleted` within one TTL plus one timer run (the guarantee docs/faults.md states).
 */
const TTL_MS = 600_000;
const ref = scaleSetRef(DEMO.scaleSetId);
const declarePresent = {
  v: 1,
  kind: "declare",
  scaleSetId: DEMO.scaleSetId,
  backendPoolId: DEMO.poolId,
  state: "present",
};
const pool = DEMO.poolId.toLowerCase();

describe("failed and unannounced deletes", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  const instancePools = (hh: Harness) =>
    hh.sim.control
      .instances(DEMO.scaleSetId)
      .map((i) => [String(i["instanceId"]), poolsByIpConfig(instanceNics(i)).ipConfig0 ?? []] as const);

  it("an instance whose delete failed is written again: the timer's reconcile puts the dropped pool back, and the next run finds nothing", async () => {
    const clock = manualClock();
    h = await startHarness({ clock, cacheEnabled: true });
    await h.send(declarePresent);
    await h.drain();
    const instance = `${DEMO.scaleSetId}/virtualMachines/1`;
    h.sim.control.failNextOperation(instance);
    h.sim.control.delete(instance);
    h.sim.control.settle();
    // Another writer drops our pool from it; no event reaches poolsync.
    h.sim.control.write(instance, dropPool(DEMO.poolId));
    h.sim.control.settle();
    clock.advance(TTL_MS + 1);

    expect(await h.services.reconcileStale()).toMatchObject({ driftFound: 1, enqueued: 1 });
    await h.drain();
    expect(instancePools(h)).toEqual([
      ["0", [pool]],
      ["1", [pool]],
    ]);
    h.sim.control.settle();
    clock.advance(TTL_MS + 1);
    expect(await h.services.reconcileStale()).toMatchObject({ driftFound: 0, enqueued: 0 });
  });

  it("a scale set whose delete failed keeps taking declarations: its instances are written, not skipped as leaving", async () => {
    const clock = manualClock();
    h = await startHarness({ clock, cacheEnabled: true });
    await h.send(declarePresent);
    await h.drain();
    h.sim.control.failNextOperation(DEMO.scaleSetId);
    h.sim.control.delete(DEMO.scaleSetId);
    h.sim.control.settle();
    expect(h.sim.control.resource(DEMO.scaleSetId)?.["properties"]).toMatchObject({ provisioningState: "Failed" });

    // The next declaration, read against ARM (the cached rows past their TTL), reaches the model and every
    // instance: they stayed, and serve traffic.
    clock.advance(TTL_MS + 1);
    await h.send({ ...declarePresent, state: "absent" });
    await h.drain();
    expect(instancePools(h)).toEqual([
      ["0", []],
      ["1", []],
    ]);
    const [d] = await h.services.declarations.listForTarget(ref);
    expect(d?.outcome).toMatchObject({ kind: "applied", appliedEverywhere: true });
  });

  it("a scale set deleted with its event lost: what was applied shows target-deleted after one TTL and one timer run; a new declaration reads ARM and shows it at once", async () => {
    const clock = manualClock();
    h = await startHarness({ clock, cacheEnabled: true });
    await h.send(declarePresent);
    await h.drain();
    h.sim.control.settle();
    await h.services.reconcileStale(); // re-reads the model our instance writes made stale: every row fresh
    h.sim.control.delete(DEMO.scaleSetId);
    h.sim.control.settle();

    // Within the TTL a pass with nothing new to finish is answered by the cache: the declaration stays applied.
    expect(await h.services.reconcile(ref, { reason: "event", attempt: 0 })).toMatchObject({
      result: "unchanged",
      armReads: 0,
    });
    expect((await h.services.declarations.listForTarget(ref))[0]?.outcome.kind).toBe("applied");
    // A timer run inside the TTL has nothing to look at.
    clock.advance(TTL_MS / 2);
    expect(await h.services.reconcileStale()).toMatchObject({ visited: 0 });

    // One TTL after the rows were read, the next timer run reads ARM: 404, and the declaration says so.
    clock.advance(TTL_MS / 2 + 1);
    expect(await h.services.reconcileStale()).toMatchObject({ visited: 1, evicted: 1 });
    expect((await h.services.declarations.listForTarget(ref))[0]?.outcome.kind).toBe("target-deleted");
  });

  it("a new declaration on a scale set deleted with its event lost is never applied from the cache: it reads ARM's 404", async () => {
    const clock = manualClock();
    h = await startHarness({ clock, cacheEnabled: true });
    await h.send(declarePresent);
    await h.drain();
    h.sim.control.settle();
    await h.services.reconcileStale(); // every row fresh
    h.sim.control.delete(DEMO.scaleSetId);
    h.sim.control.settle();

    const again = await h.services.declarations.upsert(ref, {
      scaleSetId: DEMO.scaleSetId,
      backendPoolId: DEMO.poolId,
      ipConfiguration: "",
      state: "present",
      // After the first one's (its queue insertion time, real time).
      declaredAt: new Date(Date.now() + 60_000).toISOString(),
      requestId: "after-the-delete",
      declaredBy: QUEUE_DECLARER,
    });
    expect(again.result).toBe("updated");
    // Finished only from what ARM holds (issue 41): the cached rows would say "applied", ARM says 404.
    expect(await h.services.reconcile(ref, { reason: "declared", attempt: 0 })).toMatchObject({
      result: "target-deleted",
    });
    const [d] = await h.services.declarations.listForTarget(ref);
    expect(d).toMatchObject({
      requestId: "after-the-delete",
      outcome: { kind: "target-deleted", reason: expect.stringMatching(/not ?found/i) },
    });
  });
});
