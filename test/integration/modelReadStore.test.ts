import { afterEach, describe, expect, it } from "vitest";
import { startHarness, type Harness } from "../support/harness";
import { poolId, scaleSetId, WIDE_SUBSCRIPTION, wideWorld } from "../../devkit/worlds";
import { modelNics, poolsByIpConfig } from "../../sim/wire";
import { scaleSetRef } from "../support/refs";

const VMSS = scaleSetId(WIDE_SUBSCRIPTION, "wide", "vmss-0");
const POOL = poolId(WIDE_SUBSCRIPTION, "wide", "lb", "pool-0");

/**
 * The cache rows of a pass that reads from ARM (issue 30, Table work per change): a model, or an instance with no
 * usable row, about to be written is not stored as read, because the write marks the row before it goes and then
 * stores the answer; a model with nothing to write is stored as read, so the next pass finds it.
 */
describe("the model's cache row in a pass that read it from ARM", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it("is stored once: the write's answer when it is written, the read when nothing is written", async () => {
    h = await startHarness({
      sim: { seed: wideWorld({ scaleSets: 1, capacity: 2, pools: 1 }) },
      env: { POOLSYNC_SCOPES: `/subscriptions/${WIDE_SUBSCRIPTION}`, POOLSYNC_DECLARE_WINDOW_SECONDS: "0" },
    });
    const cache = h.services.cache;
    const stores: Array<{ ours: boolean; etag: string }> = [];
    const instanceStores: Array<{ instanceId: string; ours: boolean }> = [];
    const storeInstance = cache.storeInstance.bind(cache);
    cache.storeInstance = (ref, model, base, ours, listedUnder) => {
      instanceStores.push({ instanceId: ref.instanceId, ours: ours !== undefined });
      return storeInstance(ref, model, base, ours, listedUnder);
    };
    const store = cache.storeScaleSet.bind(cache);
    cache.storeScaleSet = (ref, model, base, ours) => {
      if (ref.id.toLowerCase() === VMSS.toLowerCase()) stores.push({ ours: ours !== undefined, etag: model.etag });
      return store(ref, model, base, ours);
    };

    await h.send({ v: 1, kind: "declare", scaleSetId: VMSS, backendPoolId: POOL, state: "present" });
    await h.drainUntilEmpty(30_000);
    expect([...poolsByIpConfig(modelNics(h.sim.control.resource(VMSS)!)).ipConfig0!]).toEqual([POOL.toLowerCase()]);
    expect(h.sim.control.stats(VMSS).gets).toBe(1);
    expect(h.sim.control.stats(VMSS).puts).toBe(1);
    expect(stores).toEqual([{ ours: true, etag: expect.any(String) }]);
    // Both instances were listed with no row yet and then written: only their answers are stored.
    expect(h.sim.control.stats(VMSS).instancePuts).toBe(2);
    expect(instanceStores.sort((a, b) => a.instanceId.localeCompare(b.instanceId))).toEqual([
      { instanceId: "0", ours: true },
      { instanceId: "1", ours: true },
    ]);

    // The same pool declared again: the row is stale after our instance writes, so the pass reads ARM, finds nothing to
    // write, and stores the read, fresh for the next pass.
    stores.length = 0;
    await h.send({ v: 1, kind: "declare", scaleSetId: VMSS, backendPoolId: POOL, state: "present" });
    await h.drainUntilEmpty(30_000);
    expect(h.sim.control.stats(VMSS).gets).toBe(2);
    expect(h.sim.control.stats(VMSS).puts).toBe(1);
    expect(stores).toEqual([{ ours: false, etag: expect.any(String) }]);
    // (Not compared with ARM's ETag now: CRP's bump after the instance writes may land after this read.)
    const row = (await cache.readPartition(scaleSetRef(VMSS))).scaleSet;
    expect(row?.stale).toBe(false);
    expect(row?.model?.etag).toBe(stores[0]?.etag);
  }, 60_000);
});
