import { odata } from "@azure/data-tables";
import { describe, expect, it } from "vitest";
import { declarationEntity } from "../../../src/azure/targets/declarationRows";
import { targetPartition, writerRowKey } from "../../../src/azure/targets/rowKeys";
import { StoreTargetEvents } from "../../../src/azure/targets/targetEvents";
import type { EventCaller } from "../../../src/core/eventCaller";
import type { InstanceModel } from "../../../src/core/models";
import { instanceRef } from "../../../src/core/resourceIds";
import type { EventRow } from "../../../src/core/targetPasses";
import { bareModel } from "../../support/refs";
import { declared, NOW, OTHER, REF } from "../../support/targetPass";
import { targetTableOnAzurite } from "../../support/targetTable";

const DEBOUNCE = 30_000;
const MODEL: EventRow = { kind: "model" };
const instance = (instanceId: string): EventRow => ({ kind: "instance", instanceId });
const caller = (eventId: string): EventCaller => ({
  name: "Someone Else",
  id: "oid-else",
  appId: undefined,
  operation: "Microsoft.Compute/virtualMachineScaleSets/write",
  correlationId: "corr-1",
  eventId,
  at: undefined,
});
const writer = { resourceId: REF.id, caller: caller("ev-1") };

async function targetEventsOnAzurite() {
  const t = await targetTableOnAzurite("tevents");
  const cacheInstance = (id: string) => {
    const model: InstanceModel = { ...bareModel(`${REF.id}/virtualMachines/${id}`), instanceId: id };
    return t.cache.storeInstance(instanceRef(REF, id), model, undefined);
  };
  const rowsOf = async (ref = REF) => {
    const rows: string[] = [];
    for await (const r of t.table.listEntities({
      queryOptions: { filter: odata`PartitionKey eq ${targetPartition(ref)}` },
    }))
      rows.push(r.rowKey ?? "");
    return rows;
  };
  return { ...t, events: new StoreTargetEvents(t.store, t.owners), cacheInstance, rowsOf };
}

describe("StoreTargetEvents on Azurite", () => {
  it("on a declared target, marks every named row stale, one not cached too, keeps the writer, and claims once per debounce", async () => {
    const t = await targetEventsOnAzurite();
    await t.declarations.upsert(REF, declared("a"));
    await t.cache.storeScaleSet(REF, bareModel(REF.id), undefined);
    const first = await t.events.invalidate(REF, [MODEL, instance("3")], writer, "written by someone", DEBOUNCE);
    expect(first).toEqual({ held: true, declared: true, claimed: true });
    const snap = await t.store.readTarget(REF);
    expect(snap.model).toMatchObject({ stale: true, staleReason: "written by someone" });
    expect(snap.instances.get("3")).toMatchObject({ model: undefined, stale: true });
    const kept = await t.table.getEntity<{ caller: string; seenAt: number }>(snap.partitionKey, writerRowKey(REF.id));
    expect([JSON.parse(kept.caller), kept.seenAt]).toEqual([writer.caller, NOW]);
    t.clock.advance(DEBOUNCE - 1);
    expect((await t.events.invalidate(REF, [MODEL], writer, "again", DEBOUNCE)).claimed).toBe(false);
    t.clock.advance(1);
    expect((await t.events.invalidate(REF, [MODEL], writer, "again", DEBOUNCE)).claimed).toBe(true);
  });

  it("on a target nobody declared, marks only the rows cached and claims nothing; an uncached row's event writes nothing", async () => {
    const t = await targetEventsOnAzurite();
    await t.cache.storeScaleSet(REF, bareModel(REF.id), undefined);
    const held = await t.events.invalidate(REF, [MODEL, instance("3")], writer, "written by someone", DEBOUNCE);
    expect(held).toEqual({ held: true, declared: false, claimed: false });
    const snap = await t.store.readTarget(REF);
    expect([snap.model?.stale, snap.instances.size, snap.controlEtag]).toEqual([true, 0, undefined]);
    const other = { resourceId: OTHER.id, caller: caller("ev-2") };
    const none = await t.events.invalidate(OTHER, [MODEL, instance("0")], other, "made up", DEBOUNCE);
    expect(none).toEqual({ held: false, declared: false, claimed: false });
    expect(await t.rowsOf(OTHER)).toEqual([]);
  });

  it("forgets the named rows, or every cache row with all, and leaves the declarations", async () => {
    const t = await targetEventsOnAzurite();
    await t.declarations.upsert(REF, declared("a"));
    await t.cache.storeScaleSet(REF, bareModel(REF.id), undefined);
    await Promise.all([t.cacheInstance("0"), t.cacheInstance("1")]);
    expect(await t.events.forget(REF, [instance("0"), instance("9")], DEBOUNCE)).toEqual({
      held: true,
      declared: true,
      claimed: true,
    });
    expect([...(await t.store.readTarget(REF)).instances.keys()]).toEqual(["1"]);
    expect(await t.events.forget(REF, "all", DEBOUNCE)).toEqual({ held: true, declared: true, claimed: false });
    const snap = await t.store.readTarget(REF);
    expect([snap.model, snap.instances.size, snap.declarations.length]).toEqual([undefined, 0, 1]);
  });

  it("counts a target with declarations but no control row (stored by an earlier version) as declared, and writes its row", async () => {
    const t = await targetEventsOnAzurite();
    const at = new Date(NOW).toISOString();
    await t.table.createEntity(declarationEntity(targetPartition(REF), declared("a"), at));
    expect(await t.events.invalidate(REF, [MODEL], undefined, "written", DEBOUNCE)).toEqual({
      held: false,
      declared: true,
      claimed: true,
    });
    const control = await t.store.readControl(REF);
    expect([control.state.counts.present, control.state.debounceAt]).toEqual([1, NOW]);
  });
});
