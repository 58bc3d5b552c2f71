import { describe, expect, it } from "vitest";
import { nicRowKey } from "../../../src/azure/targets/rowKeys";
import { instanceRef, parseVmId, type VmRef } from "../../../src/core/resourceIds";
import { bareModel, instanceModel as instanceOf, nicModel, nicRefOf, scaleSetRef, vmModel } from "../../support/refs";
import { declared, NOW, OTHER, REF } from "../../support/targetPass";
import { targetTableOnAzurite } from "../../support/targetTable";

const inGroup = (type: string, name: string) =>
  REF.id.replace("Microsoft.Compute/virtualMachineScaleSets/vmss", `${type}/${name}`);
const nicOf = (name: string) => nicRefOf(inGroup("Microsoft.Network/networkInterfaces", name));
const vmOf = (name: string): VmRef => {
  const r = parseVmId(inGroup("Microsoft.Compute/virtualMachines", name));
  if (!r.ok) throw new Error(r.reason);
  return r.value;
};
const instanceModel = (id: string) => instanceOf(REF.id, id);

describe("TargetCache on Azurite", () => {
  it("stores only over the row as read: an invalidation in between wins, and so does a row created meanwhile", async () => {
    const { cache } = await targetTableOnAzurite("tcache");
    expect(await cache.storeScaleSet(REF, bareModel(REF.id, "W/1"), undefined)).toBe(true);
    expect(await cache.storeScaleSet(REF, bareModel(REF.id, "W/0"), undefined)).toBe(false);
    const base = await cache.beginWrite(REF);
    await cache.markStale(REF, "written by someone");
    expect(await cache.storeScaleSet(REF, bareModel(REF.id, "W/2"), base)).toBe(false);
    const marked = await cache.readEntry(REF);
    expect(marked).toMatchObject({ model: { etag: "W/1" }, stale: true, staleReason: "written by someone" });
    expect(await cache.storeScaleSet(REF, bareModel(REF.id, "W/3"), marked?.rowEtag)).toBe(true);
    expect(await cache.readEntry(REF)).toMatchObject({ model: { etag: "W/3" }, stale: false });
  });

  it("keeps a NIC's row in its owner's partition, stores none for a NIC no target owns, and a lone VM's in its own", async () => {
    const { store, owners, cache } = await targetTableOnAzurite("tcache");
    const nic = nicOf("nic-1");
    expect(await cache.storeResource(nic, nicModel(nic.id), undefined)).toBe(false);
    expect(await cache.readEntry(nic)).toBeUndefined();
    await owners.remember(nic, REF);
    expect(await cache.storeResource(nic, nicModel(nic.id), undefined)).toBe(true);
    expect((await store.readTarget(REF)).nics.get(nicRowKey(nic))?.model?.id).toBe(nic.id);
    const vm = vmOf("vm-alone");
    expect(await cache.storeResource(vm, vmModel(vm.id), undefined)).toBe(true);
    expect((await store.readTarget(vm)).vms.size).toBe(1);
    await cache.evictResource(nic);
    expect(await cache.readEntry(nic)).toBeUndefined();
  });

  it("lists the rows stale or read before a time as refresh candidates, and the scale sets with a model as cached", async () => {
    const { clock, cache } = await targetTableOnAzurite("tcache");
    const THIRD = scaleSetRef(REF.id.replace(/vmss$/, "third"));
    await cache.storeScaleSet(REF, bareModel(REF.id), undefined);
    await cache.storeInstance(instanceRef(REF, "0"), instanceModel("0"), undefined);
    clock.advance(600_000);
    await cache.storeScaleSet(OTHER, bareModel(OTHER.id), undefined);
    await cache.markStale(instanceRef(OTHER, "1"), "an event");
    await cache.markStale(THIRD, "an event");
    const candidates = await cache.listRefreshCandidates(NOW + 300_000);
    expect(candidates.map((c) => [c.scaleSetId, c.instanceId, c.stale, c.since]).sort()).toEqual(
      [
        [REF.key, undefined, false, NOW],
        [REF.key, "0", false, NOW],
        [OTHER.key, "1", true, NOW + 600_000],
        [THIRD.key, undefined, true, NOW + 600_000],
      ].sort(),
    );
    expect([...(await cache.listCachedScaleSets())].sort()).toEqual([REF.key, OTHER.key].sort());
  });

  it("evicts a target's cache rows with its debounce, keeps its declarations, and writes nothing when nothing is left", async () => {
    const { store, owners, cache, declarations } = await targetTableOnAzurite("tcache");
    await declarations.upsert(REF, declared("a"));
    await cache.storeScaleSet(REF, bareModel(REF.id), undefined);
    const vm = vmOf("vm-1");
    await owners.remember(vm, REF);
    await cache.storeResource(vm, vmModel(vm.id, { scaleSetId: REF.id }), undefined);
    await store.updateControl(REF, (s) => ({ state: { ...s, debounceAt: NOW }, result: 0 }));
    await cache.evictScaleSet(REF);
    const snap = await store.readTarget(REF);
    expect([snap.model, snap.vms.size, snap.declarations.length, snap.control.debounceAt]).toEqual([
      undefined,
      0,
      1,
      0,
    ]);
    await cache.evictScaleSet(REF);
    expect((await store.readControl(REF)).etag).toBe(snap.controlEtag);
  });

  it("counts the census up to its most rows and one more, with why a row is stale; no table is no rows", async () => {
    const { table, cache } = await targetTableOnAzurite("tcache");
    await cache.storeScaleSet(REF, bareModel(REF.id), undefined);
    for (const id of ["0", "1", "2"]) await cache.storeInstance(instanceRef(REF, id), instanceModel(id), undefined);
    await cache.markStale(instanceRef(REF, "1"), "an event");
    const census = async (max?: number) => {
      const rows = [];
      for await (const r of cache.censusRows(max)) rows.push(r);
      return rows;
    };
    expect(await census(2)).toHaveLength(3);
    const all = await census();
    expect(all).toHaveLength(4);
    expect(all.find((r) => r.instanceId === "1")).toMatchObject({ stale: true, staleReason: "an event" });
    await table.deleteTable();
    expect(await census()).toEqual([]);
  });

  it("reads a Flexible scale set's cached VMs with their NICs in the VM's order, at most as many as asked", async () => {
    const { owners, cache } = await targetTableOnAzurite("tcache");
    const [nicA, nicB] = [nicOf("nic-a"), nicOf("nic-b")];
    const vms = [
      vmModel(vmOf("vm-1").id, { scaleSetId: REF.id, nicIds: [nicB.id, nicA.id] }),
      vmModel(vmOf("vm-2").id, { scaleSetId: REF.id }),
      vmModel(vmOf("vm-3").id, { scaleSetId: OTHER.id }),
    ];
    for (const [i, model] of vms.entries()) {
      const ref = vmOf(`vm-${i + 1}`);
      await owners.remember(ref, REF);
      await cache.storeResource(ref, model, undefined);
    }
    await owners.remember(nicA, REF);
    await cache.storeResource(nicA, nicModel(nicA.id), undefined);
    const one = await cache.readVmNics(REF, 1);
    expect(one.truncated).toBe(true);
    expect(one.vms.map((v) => [v.vm.model?.id, v.nics.map((n) => [n.id, n.entry?.model?.id])])).toEqual([
      [
        vms[0]!.id,
        [
          [nicB.id, undefined],
          [nicA.id, nicA.id],
        ],
      ],
    ]);
    const both = await cache.readVmNics(REF, 5);
    expect([both.truncated, both.vms.map((v) => v.vm.model?.id)]).toEqual([false, [vms[0]!.id, vms[1]!.id]]);
  });
});
