import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ResourceOwnerTable } from "../../../src/azure/resourceOwnerTable";
import { PassCache } from "../../../src/azure/targets/passCache";
import { MODEL_ROW, targetPartition } from "../../../src/azure/targets/rowKeys";
import { instanceRef, parseVmId } from "../../../src/core/resourceIds";
import { bareModel, instanceModel as instanceOf, vmModel } from "../../support/refs";
import { declared, NOW, OTHER, REF } from "../../support/targetPass";
import { targetTableOnAzurite } from "../../support/targetTable";

const VM_ID = REF.id.replace("virtualMachineScaleSets/vmss", "virtualMachines/vm-1");
const vm = (etag: string) => vmModel(VM_ID, { etag, scaleSetId: REF.id });
const instanceModel = (id: string) => instanceOf(REF.id, id);

/** The targets table, and a PassCache over REF as a pass reads it now (its writes, to commit as the pass would). */
async function passCacheOnAzurite() {
  const t = await targetTableOnAzurite("pcache");
  const pass = async () => {
    const snapshot = await t.store.readTarget(REF);
    const writes = t.store.passWrites(snapshot, { state: snapshot.control, etag: snapshot.controlEtag });
    return { cache: new PassCache(t.store, snapshot, writes, t.owners), writes };
  };
  return { ...t, pass };
}

describe("PassCache on Azurite", () => {
  it("gathers its stores into the pass's writes: nothing lands before the commit, then the rows read back fresh", async () => {
    const t = await passCacheOnAzurite();
    const { cache, writes } = await t.pass();
    expect(await cache.storeScaleSet(REF, bareModel(REF.id, "W/1"), undefined)).toBe(true);
    expect(await cache.storeInstance(instanceRef(REF, "0"), instanceModel("0"), undefined, undefined, "W/1")).toBe(
      true,
    );
    expect((await t.store.readTarget(REF)).model).toBeUndefined();
    await writes.commit(() => undefined);
    const snap = await t.store.readTarget(REF);
    expect(snap.model).toMatchObject({ model: { etag: "W/1" }, stale: false, readAt: NOW });
    expect(snap.instances.get("0")).toMatchObject({ model: { instanceId: "0" }, listedUnder: "W/1" });
  });

  it("stores a neighbour's model from the group's LIST at once, only over its row as read, keeping its idle age", async () => {
    const t = await passCacheOnAzurite();
    await t.cache.storeScaleSet(OTHER, bareModel(OTHER.id, "W/1"), undefined);
    const base = (await t.cache.readEntry(OTHER))!.rowEtag;
    t.clock.advance(60_000);
    const { cache, writes } = await t.pass();
    expect(await cache.refreshScaleSet(OTHER, bareModel(OTHER.id, "W/2"), base)).toBe(true);
    const row = await t.table.getEntity(targetPartition(OTHER), MODEL_ROW);
    expect([row["armEtag"], row["readAt"], row["touchedAt"]]).toEqual(["W/2", NOW + 60_000, NOW]);
    expect(await cache.refreshScaleSet(OTHER, bareModel(OTHER.id, "W/3"), base)).toBe(false);
    expect(writes.empty).toBe(true);
  });

  it("marks a model too large for a table entity stale with why, instead of storing it", async () => {
    const t = await passCacheOnAzurite();
    await t.cache.storeScaleSet(REF, bareModel(REF.id, "W/1"), undefined);
    const { cache, writes } = await t.pass();
    const huge = { ...bareModel(REF.id, "W/2"), padding: randomBytes(1_200_000).toString("base64") };
    expect(await cache.storeScaleSet(REF, huge, (await cache.readEntry(REF))?.rowEtag)).toBe(false);
    await writes.commit(() => undefined);
    const model = (await t.store.readTarget(REF)).model;
    expect(model).toMatchObject({
      stale: true,
      staleReason: expect.stringMatching(/^not cacheable: model is \d+ bytes/),
    });
    expect(model?.model?.etag).toBe("W/1");
  });

  it("evicts only its own target: its rows, window, debounce and attempt go with the commit, its declarations stay", async () => {
    const t = await passCacheOnAzurite();
    await t.declarations.upsert(REF, declared("a"));
    await t.cache.storeScaleSet(REF, bareModel(REF.id), undefined);
    await t.cache.storeInstance(instanceRef(REF, "0"), instanceModel("0"), undefined);
    const attempt = { attempt: 1, nextAttemptAt: NOW + 60_000, reason: "429" };
    const window = { openedAt: NOW, claimant: "msg", leading: false, closed: false };
    await t.store.updateControl(REF, (s) => ({ state: { ...s, window, debounceAt: NOW, attempt }, result: 0 }));
    const { cache, writes } = await t.pass();
    await expect(cache.evictScaleSet(OTHER)).rejects.toThrow(/only its own target/);
    await cache.evictScaleSet(REF);
    await writes.commit(() => undefined);
    const snap = await t.store.readTarget(REF);
    expect([snap.model, snap.instances.size, snap.declarations.length]).toEqual([undefined, 0, 1]);
    expect([snap.control.window, snap.control.debounceAt, snap.control.attempt]).toEqual([undefined, 0, undefined]);
  });

  it("tells the owners table which target caches a VM it stores first, and does not store a VM again while its ETag holds", async () => {
    const t = await passCacheOnAzurite();
    const ref = parseVmId(VM_ID);
    if (!ref.ok) throw new Error(ref.reason);
    const first = await t.pass();
    expect(await first.cache.storeResource(ref.value, vm("W/1"), undefined)).toBe(true);
    expect((await new ResourceOwnerTable(t.shared).ownerOf(ref.value))?.key).toBe(REF.key);
    await first.writes.commit(() => undefined);
    const second = await t.pass();
    const base = (await second.cache.readEntry(ref.value))?.rowEtag;
    expect(await second.cache.storeResource(ref.value, vm("W/1"), base)).toBe(true);
    expect(second.writes.empty).toBe(true);
    expect(await second.cache.storeResource(ref.value, vm("W/2"), base)).toBe(true);
    expect(second.writes.empty).toBe(false);
  });
});
