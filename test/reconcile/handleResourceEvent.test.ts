import { beforeEach, describe, expect, it } from "vitest";
import type { InstanceModel } from "../../src/core/models";
import { instanceRef } from "../../src/core/resourceIds";
import { handleResourceEvent } from "../../src/reconcile/handleResourceEvent";
import { eventGridEvent } from "../support/armEventSamples";
import { eventDepsOnAzurite } from "../support/eventDeps";
import { bareModel, scaleSetRef } from "../support/refs";

/** An ARM event as Event Grid delivers it, about a scale set or an instance: the tables and the queue on Azurite. */
const SUB = "11111111-2222-3333-4444-555555555555"; // the samples' subscription
const RG = `/subscriptions/${SUB}/resourceGroups/rg`;
const REF = scaleSetRef(`${RG}/providers/Microsoft.Compute/virtualMachineScaleSets/vmss-ev`);
const POOL = `${RG}/providers/Microsoft.Network/loadBalancers/lb/backendAddressPools/pool-a`;
const WRITE = "Microsoft.Compute/virtualMachineScaleSets/write";

const model = bareModel(REF.id);
const instance: InstanceModel = { ...model, id: `${REF.id}/virtualMachines/0`, instanceId: "0" };

describe("handleResourceEvent", () => {
  let e: Awaited<ReturnType<typeof eventDepsOnAzurite>>;
  const modelStale = async () => (await e.t.cache.readEntry(REF))?.stale;
  beforeEach(async () => {
    e = await eventDepsOnAzurite("armev", `/subscriptions/${SUB}`);
    await e.t.declare(REF, [{ backendPoolId: POOL }]);
    await e.t.cache.storeScaleSet(REF, model, undefined);
    await e.t.cache.storeInstance(instanceRef(REF, "0"), instance, undefined);
  });

  it("answers a bad event without throwing, and logs it", async () => {
    expect(await handleResourceEvent({ data: 42 }, e.deps)).toBe("malformed");
    expect(e.t.log.lines.some((l) => l.event === "event.malformed")).toBe(true);
  });

  it("someone else's write marks the model stale and wakes the scale set once per window; our own is left alone", async () => {
    const own = eventGridEvent({ resourceUri: REF.id, operationName: WRITE, clientRequestId: "ours-1", id: "e-own" });
    e.ours.add("ours-1");
    expect(await handleResourceEvent(own, e.deps)).toBe("own-write");
    expect(await modelStale()).toBe(false);
    const theirs = eventGridEvent({ resourceUri: REF.id, operationName: WRITE, clientRequestId: "theirs", id: "e-1" });
    expect(await handleResourceEvent(theirs, e.deps)).toBe("invalidated+reconcile");
    expect(await modelStale()).toBe(true);
    expect(await handleResourceEvent({ ...theirs, id: "e-2" }, e.deps)).toBe("invalidated");
    expect(e.enqueued()).toEqual([expect.objectContaining({ scaleSetId: REF.id, visibilityTimeoutSeconds: 30 })]);
  });

  it("an instance's delete drops its row and marks the model stale, recording nothing on the declarations", async () => {
    const uri = `${REF.id}/virtualMachines/0`;
    const deleted = eventGridEvent({
      type: "Microsoft.Resources.ResourceDeleteSuccess",
      resourceUri: uri,
      operationName: "Microsoft.Compute/virtualMachineScaleSets/virtualMachines/delete",
    });
    expect(await handleResourceEvent(deleted, e.deps)).toBe("deleted");
    expect(await e.t.cache.readEntry(instanceRef(REF, "0"))).toBeUndefined();
    expect(await modelStale()).toBe(true);
    expect((await e.t.declarations.listForTarget(REF))[0]!.outcome.kind).toBe("pending");
  });

  it("a scale set's delete drops its rows and asks for a pass that reads ARM", async () => {
    const deleted = eventGridEvent({
      type: "Microsoft.Resources.ResourceDeleteSuccess",
      resourceUri: REF.id,
      operationName: "Microsoft.Compute/virtualMachineScaleSets/delete",
    });
    expect(await handleResourceEvent(deleted, e.deps)).toBe("deleted+reconcile");
    expect((await e.t.cache.readEntry(REF))?.model).toBeUndefined();
    expect(e.enqueued()).toEqual([expect.objectContaining({ scaleSetId: REF.id, fresh: true })]);
  });

  it("a write to a scale set poolsync holds nothing for is only counted", async () => {
    const other = `${RG}/providers/Microsoft.Compute/virtualMachineScaleSets/not-ours`;
    expect(await handleResourceEvent(eventGridEvent({ resourceUri: other, operationName: WRITE }), e.deps)).toBe(
      "unheld",
    );
    expect((await e.unheld.summary()).recent).toEqual([expect.objectContaining({ resourceId: other })]);
    expect(e.enqueued()).toEqual([]);
  });
});
