import { afterEach, describe, expect, it } from "vitest";
import { DEMO, startHarness, type Harness } from "../support/harness";
import { eventGridEvent, cloudEvent } from "../support/armEventSamples";
import { instanceRefOf, scaleSetRef } from "../support/refs";
import { addIpConfig, dropPool, instanceNics, modelNics, poolsByIpConfig } from "../../sim/wire";
import type { EventGridEvent } from "../../sim";

const vmss = scaleSetRef(DEMO.scaleSetId);
const vm1 = instanceRefOf(`${DEMO.scaleSetId}/virtualMachines/1`);
const declarePresent = {
  v: 1,
  kind: "declare",
  scaleSetId: DEMO.scaleSetId,
  backendPoolId: DEMO.poolId,
  state: "present",
};

async function rows(h: Harness) {
  const p = await h.services.cache.readPartition(vmss);
  return { scaleSet: p.scaleSet?.stale, vm0: p.instances.get("0")?.stale, vm1: p.instances.get("1")?.stale };
}

describe("onResourceEvent: invalidation across Azurite and the simulator", () => {
  let h: Harness;
  const events: EventGridEvent[] = [];
  afterEach(async () => {
    events.length = 0;
    await h.stop();
  });

  async function applied(env: Record<string, string> = {}) {
    h = await startHarness({ cacheEnabled: true, env: { POOLSYNC_EVENT_DEBOUNCE_SECONDS: "0", ...env } });
    h.sim.control.onEvent((e) => events.push(e));
    await h.send(declarePresent);
    await h.drain();
    h.sim.control.settle(); // the scale set's internal ETag bump after our instance writes
  }

  it("marks the instance and its scale set stale for someone else's instance write, and nothing else", async () => {
    await applied();
    // Fresh rows after a refresh (our instance writes left the scale set stale, as they must).
    await h.services.cache.storeScaleSet(
      vmss,
      await h.services.compute.getScaleSet(vmss),
      (await h.services.cache.readPartition(vmss)).scaleSet?.rowEtag,
    );
    expect(await rows(h)).toEqual({ scaleSet: false, vm0: false, vm1: false });

    for (const make of [eventGridEvent, cloudEvent]) {
      const outcome = await h.services.handleResourceEvent(
        make({
          resourceUri: `${DEMO.scaleSetId}/virtualMachines/0`,
          operationName: "Microsoft.Compute/virtualMachineScaleSets/virtualMachines/write",
          clientRequestId: "someone-else",
        }),
      );
      expect(outcome).toBe("invalidated+reconcile");
    }
    expect(await rows(h)).toEqual({ scaleSet: true, vm0: true, vm1: false });
  });

  it("does not invalidate on our own write's event; does on someone else's", async () => {
    await applied();
    const ours = events.filter(
      (e) => e.data.resourceUri.toLowerCase() === vm1.key && e.data.operationName.endsWith("virtualMachines/write"),
    );
    expect(ours).toHaveLength(1);
    expect(await h.services.handleResourceEvent(ours[0])).toBe("own-write");
    expect((await rows(h)).vm1).toBe(false);

    events.length = 0;
    h.sim.control.write(vm1.id, addIpConfig("ipConfig1", DEMO.subnetId));
    h.sim.control.settle(); // events follow the end of the write's operation
    const theirs = events.find((e) => e.data.resourceUri.toLowerCase() === vm1.key)!;
    expect(theirs.data.resourceUri.toLowerCase()).toBe(vm1.key);
    expect(await h.services.handleResourceEvent(theirs)).toBe("invalidated+reconcile");
    expect((await rows(h)).vm1).toBe(true);
  });

  it("a refresh that read ARM before an event cannot store over the invalidation", async () => {
    await applied();
    const base = (await h.services.cache.readPartition(vmss)).scaleSet?.rowEtag;
    const model = await h.services.compute.getScaleSet(vmss); // the refresh reads ARM…
    await h.services.handleResourceEvent(
      eventGridEvent({
        resourceUri: DEMO.scaleSetId,
        operationName: "Microsoft.Compute/virtualMachineScaleSets/write",
      }),
    ); // …the event lands…
    expect(await h.services.cache.storeScaleSet(vmss, model, base)).toBe(false); // …and the refresh's store loses
    expect((await rows(h)).scaleSet).toBe(true);
  });

  it("repairs another writer's change that dropped our pool: event → reconcile → pool back, their change kept", async () => {
    await applied({ POOLSYNC_EVENT_DEBOUNCE_SECONDS: "1" });
    events.length = 0;
    h.sim.control.write(DEMO.scaleSetId, (r) => {
      dropPool(DEMO.poolId)(r);
      addIpConfig("ipConfig1", DEMO.subnetId)(r);
    });
    h.sim.control.settle();
    expect(events.length).toBeGreaterThan(0);
    for (const e of events) await h.services.handleResourceEvent(e);
    expect(await h.queueDepth()).toBe(1);
    await h.drainUntilEmpty(10_000);

    expect(poolsByIpConfig(modelNics(h.sim.control.resource(DEMO.scaleSetId)!))).toEqual({
      ipConfig0: [DEMO.poolId.toLowerCase()],
      ipConfig1: [],
    });
    for (const vm of h.sim.control.instances(DEMO.scaleSetId))
      expect(poolsByIpConfig(instanceNics(vm)).ipConfig0).toEqual([DEMO.poolId.toLowerCase()]);
  });

  it("100 events in a burst for one scale set enqueue one reconcile per debounce window", async () => {
    await applied({ POOLSYNC_EVENT_DEBOUNCE_SECONDS: "60" });
    const burst = Array.from({ length: 100 }, (_, i) =>
      eventGridEvent({
        id: `e-${i}`,
        resourceUri: i % 2 ? DEMO.scaleSetId : `${DEMO.scaleSetId}/virtualMachines/${i % 4 === 0 ? 0 : 1}`,
        operationName: "Microsoft.Compute/virtualMachineScaleSets/write",
      }),
    );
    const outcomes = await Promise.all(burst.map((e) => h.services.handleResourceEvent(e)));
    expect(outcomes.filter((o) => o === "invalidated+reconcile")).toHaveLength(1);
    expect(await h.queueDepth()).toBe(1);
  });

  it("a delete event drops the rows and asks ARM: only ARM's 404 shows the declarations as target deleted", async () => {
    await applied();
    h.sim.control.delete(DEMO.scaleSetId);
    h.sim.control.settle();
    const deleted = events.find(
      (e) =>
        e.eventType === "Microsoft.Resources.ResourceDeleteSuccess" && e.data.resourceUri.toLowerCase() === vmss.key,
    )!;
    expect(await h.services.handleResourceEvent(deleted)).toBe("deleted+reconcile");
    const p = await h.services.cache.readPartition(vmss);
    expect([p.scaleSet, p.instances.size]).toEqual([undefined, 0]);
    expect((await h.services.declarations.listForTarget(vmss)).map((d) => d.outcome.kind)).toEqual(["applied"]);
    const [outcome] = await h.drain();
    expect(outcome).toMatchObject({ result: "reconciled", report: { result: "target-deleted" } });
    const [d] = await h.services.declarations.listForTarget(vmss);
    expect(d?.outcome.kind).toBe("target-deleted");
  });

  it("a forged (or late, replayed) delete event of a live scale set records nothing: ARM answers, repair goes on", async () => {
    await applied();
    const forged = eventGridEvent({
      id: "forged-delete",
      type: "Microsoft.Resources.ResourceDeleteSuccess",
      resourceUri: DEMO.scaleSetId,
      operationName: "Microsoft.Compute/virtualMachineScaleSets/delete",
    });
    expect(await h.services.handleResourceEvent(forged)).toBe("deleted+reconcile");
    // Meanwhile someone drops our pool from the model: the repair must still happen.
    h.sim.control.write(DEMO.scaleSetId, dropPool(DEMO.poolId));
    // Their write's operation ends before the repair (one still running answers it 409, a retry 5 s later).
    h.sim.control.settle();
    const outcomes = await h.drain();
    expect(outcomes).toEqual([
      expect.objectContaining({ result: "reconciled", report: expect.objectContaining({ result: "applied" }) }),
    ]);
    expect((await h.services.declarations.listForTarget(vmss)).map((d) => d.outcome.kind)).toEqual(["applied"]);
    expect(poolsByIpConfig(modelNics(h.sim.control.resource(DEMO.scaleSetId)!)).ipConfig0).toEqual([
      DEMO.poolId.toLowerCase(),
    ]);
    // The timer does not skip it either: it is declared and live.
    expect(await h.services.reconcileStale()).toMatchObject({ driftFound: 0 });
  });

  it("completes malformed and foreign events without throwing and without touching anything", async () => {
    await applied();
    const before = await rows(h);
    for (const raw of [
      "{",
      { id: "x", eventType: "Microsoft.Resources.ResourceWriteSuccess", data: {} },
      eventGridEvent({
        resourceUri:
          "/subscriptions/99999999-8888-7777-6666-555555555555/resourceGroups/x/providers/Microsoft.Compute/virtualMachineScaleSets/y",
        operationName: "w",
      }),
    ]) {
      await expect(h.services.handleResourceEvent(raw)).resolves.toMatch(/malformed|out-of-scope/);
    }
    expect(await rows(h)).toEqual(before);
    expect(await h.queueDepth()).toBe(0);
  });
});
