import { describe, expect, it } from "vitest";
import type { CachedPartition } from "../../src/core/ports";
import { observeScaleSet, poolsOf } from "../../src/intake/observedState";
import {
  cached,
  cachedVm,
  instanceModel,
  NOW,
  OPTIONS,
  POOL_A,
  POOL_OTHER,
  scaleSetModel,
  stored,
  TTL_MS,
  VM,
  VMSS,
} from "./viewFixtures";

/**
 * src/intake/observedState.ts: declared vs observed for one target, from the declarations and the ETag cache alone:
 * whether each membership holds on the model and every instance, and how old and how sure that knowledge is.
 */
const partition = (model: CachedPartition["scaleSet"], instances: Array<[string, string[]]> = []): CachedPartition => ({
  scaleSet: model,
  instances: new Map(instances.map(([id, pools]) => [id, cached(instanceModel(id, pools))])),
});

describe("observeScaleSet", () => {
  it("is in sync when the model and every instance hold the declared pool", () => {
    const view = observeScaleSet(
      VMSS,
      [stored()],
      partition(cached(scaleSetModel([POOL_A])), [["0", [POOL_A]]]),
      OPTIONS,
    );
    const [m] = view.memberships;
    expect(m).toMatchObject({ sync: "in-sync", model: { state: "present", stale: false }, declared: "present" });
    expect(m?.instances).toEqual([expect.objectContaining({ instanceId: "0", state: "present", etag: '"i0"' })]);
    expect(view.model).toMatchObject({ cached: true, etag: '"m1"', capacity: 2, stale: false });
  });

  it("calls it drift when one instance lacks the pool, and lists instances in numeric order", () => {
    const rows = partition(cached(scaleSetModel([POOL_A])), [
      ["10", [POOL_A]],
      ["2", []],
    ]);
    const [m] = observeScaleSet(VMSS, [stored()], rows, OPTIONS).memberships;
    expect(m?.sync).toBe("drift");
    expect(m?.instances.map((i) => [i.instanceId, i.state])).toEqual([
      ["2", "absent"],
      ["10", "present"],
    ]);
  });

  it("does not call an instance being deleted drift", () => {
    const going = { ...instanceModel("3", []), provisioningState: "Deleting" };
    const rows: CachedPartition = {
      scaleSet: cached(scaleSetModel([POOL_A])),
      instances: new Map([["3", cached(going)]]),
    };
    const [m] = observeScaleSet(VMSS, [stored()], rows, OPTIONS).memberships;
    expect(m?.instances[0]).toMatchObject({ state: "absent", note: "being deleted" });
    expect(m?.sync).toBe("in-sync");
  });

  it("says how stale a row is: marked stale with its reason, or read longer ago than the TTL", () => {
    const marked = observeScaleSet(
      VMSS,
      [stored()],
      partition(cached(scaleSetModel([POOL_A]), { stale: true, staleReason: "event e1 ResourceWriteSuccess" })),
      OPTIONS,
    );
    expect(marked.model).toMatchObject({ stale: true, staleReason: "event e1 ResourceWriteSuccess" });
    const old = observeScaleSet(
      VMSS,
      [stored()],
      partition(cached(scaleSetModel([POOL_A]), { readAt: NOW - 2 * TTL_MS })),
      OPTIONS,
    );
    expect(old.memberships[0]?.model).toMatchObject({ stale: true, staleReason: "read 600 s ago, past the 300 s TTL" });
  });

  it("knows nothing, and says why, when the cache is off or the model was never read", () => {
    const off = observeScaleSet(VMSS, [stored()], partition(cached(scaleSetModel([POOL_A]))), {
      ...OPTIONS,
      cacheEnabled: false,
    });
    expect(off.memberships[0]).toMatchObject({
      sync: "unknown",
      model: { state: "unknown", note: expect.stringMatching(/disabled/) },
    });
    const unread = observeScaleSet(VMSS, [stored()], partition(undefined), OPTIONS);
    expect(unread.memberships[0]).toMatchObject({ sync: "unknown", model: { state: "unknown", note: "not read yet" } });
    expect(unread.model).toEqual({ cached: false, stale: false });
  });

  it("shows every pool on the model, another writer's too, marking which ones a declaration names", () => {
    const view = observeScaleSet(VMSS, [stored()], partition(cached(scaleSetModel([POOL_A, POOL_OTHER]))), OPTIONS);
    expect(view.observedPools.map((p) => [p.backendPoolId, p.declared])).toEqual([
      [POOL_A, true],
      [POOL_OTHER, false],
    ]);
    expect(poolsOf(scaleSetModel([POOL_OTHER]).nics)).toEqual([
      { nicConfiguration: "nic0", ipConfiguration: "ipconfig1", backendPoolId: POOL_OTHER },
    ]);
  });

  it("takes an IP-based pool's membership from what ARM answered its pool write, not from the cache", () => {
    const viaPool = stored({ outcome: { kind: "applied", at: "2026-12-02T09:01:00.000Z", via: "pool" } });
    const [m] = observeScaleSet(VMSS, [viaPool], partition(cached(scaleSetModel([]))), OPTIONS).memberships;
    expect(m).toMatchObject({ sync: "in-sync", model: { state: "unknown" }, instances: [] });
  });

  it("judges a VM target on its NICs alone, and a VM not cached yet as unknown", () => {
    const onVm = stored({ scaleSetId: VM });
    const none = observeScaleSet(VM, [onVm], partition(undefined), OPTIONS, { vms: [], truncated: false });
    expect(none.memberships[0]?.sync).toBe("unknown");
    const held = observeScaleSet(VM, [onVm], partition(undefined), OPTIONS, {
      vms: [cachedVm(VM, [{ name: "vm-1-nic", pools: [POOL_A] }])],
      truncated: false,
    });
    expect(held.memberships[0]).toMatchObject({ sync: "in-sync", vms: [{ vmId: VM, state: "present" }] });
    expect(held.vms?.[0]?.nics[0]?.ipConfigurations[0]?.backendPools).toEqual([{ id: POOL_A, declared: true }]);
  });
});
