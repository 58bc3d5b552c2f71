import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cachedVmNics, loadScaleSetView } from "../../src/intake/scaleSetView";
import { DEMO, startHarness, type Harness } from "../support/harness";
import { targetRefOf } from "./requests";

/**
 * src/intake/scaleSetView.ts: a target's memberships view from the declarations and the cache a pass left (Azurite),
 * with the VMs' NICs for a VM or a Flexible scale set and none for a Uniform one; no ARM call.
 */
const GROUP = DEMO.scaleSetId.replace(/virtualMachineScaleSets\/.*$/, "");
const TARGETS = {
  uniform: DEMO.scaleSetId,
  flexible: `${GROUP}virtualMachineScaleSets/etag-k8s-flex-0`,
  vm: `${GROUP}virtualMachines/etag-k8s-vm-0`,
};

describe("loadScaleSetView", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ cacheEnabled: true, env: { POOLSYNC_AUTH: "key" } });
    for (const targetId of Object.values(TARGETS))
      await h.send({ v: 1, kind: "declare", targetId, backendPoolId: DEMO.poolId, state: "present" });
    await h.drainUntilEmpty(30_000);
  });
  afterAll(async () => {
    await h.stop();
  });
  const view = (id: string) =>
    loadScaleSetView(targetRefOf(id), {
      declarations: h.services.declarations,
      cache: h.services.cache,
      now: h.services.clock.now,
      cacheTtlMs: h.config.cacheTtlMs,
      drifts: h.services.drifts,
    });

  it("shows a Uniform scale set's membership in sync on its model and instances, and no VMs", async () => {
    const v = await view(TARGETS.uniform);
    expect(v.model.cached).toBe(true);
    expect(v.memberships).toEqual([
      expect.objectContaining({ backendPoolId: DEMO.poolId, declared: "present", sync: "in-sync", drift: null }),
    ]);
    expect(v.memberships[0]?.instances.length).toBeGreaterThan(0);
    expect(v.vms).toBeUndefined();
  });

  it("shows a VM target's and a Flexible scale set's VMs with the pool on their NICs", async () => {
    for (const id of [TARGETS.vm, TARGETS.flexible]) {
      const v = await view(id);
      expect(v.memberships[0]).toMatchObject({ sync: "in-sync" });
      expect(v.vms?.length).toBeGreaterThan(0);
      const pools = v.vms!.flatMap((vm) => vm.nics.flatMap((n) => n.ipConfigurations.flatMap((c) => c.backendPools)));
      expect(pools.some((p) => p.id.toLowerCase() === DEMO.poolId.toLowerCase() && p.declared)).toBe(true);
    }
  });

  it("answers VM rows only where they can hold the target's memberships: none for a Uniform scale set", async () => {
    const partition = async (id: string) => h.services.cache.readPartition(targetRefOf(id));
    expect(
      await cachedVmNics(targetRefOf(TARGETS.uniform), await partition(TARGETS.uniform), h.services.cache),
    ).toBeUndefined();
    const flexible = await cachedVmNics(
      targetRefOf(TARGETS.flexible),
      await partition(TARGETS.flexible),
      h.services.cache,
    );
    expect(flexible?.vms.length).toBeGreaterThan(0);
    // A scale set not cached yet may be Flexible: with no VM row found either, there is nothing to show.
    const unread = `${GROUP}virtualMachineScaleSets/etag-k8s-mp-auto`;
    expect(await cachedVmNics(targetRefOf(unread), await partition(unread), h.services.cache)).toBeUndefined();
    // A cache that keeps no VM rows.
    expect(await cachedVmNics(targetRefOf(TARGETS.vm), await partition(TARGETS.vm), {})).toBeUndefined();
  });
});
