import { describe, expect, it } from "vitest";
import type { VmModel } from "../../src/core/models";
import { freshnessOf, observeOnVm, vmNicsViews } from "../../src/intake/vmNicState";
import { cached, cachedVm, nicId, NOW, POOL_A, POOL_OTHER, stored, TTL_MS, VM } from "./viewFixtures";

/**
 * src/intake/vmNicState.ts: declared vs observed on a VM's NICs, from the cache rows only: each NIC's pools, and
 * whether the VM holds each declaration on the NIC it lands on.
 */
const O = { now: NOW, ttlMs: TTL_MS };
const onVm = stored({ scaleSetId: VM });

describe("observeOnVm", () => {
  it("observes whether the primary NIC holds the declared pool, whatever was declared", () => {
    expect(observeOnVm(cachedVm(VM, [{ name: "nic-a", pools: [POOL_A] }]), onVm, O)).toEqual({
      vmId: VM,
      state: "present",
      stale: false,
    });
    expect(observeOnVm(cachedVm(VM, [{ name: "nic-a", pools: [POOL_OTHER] }]), onVm, O)).toMatchObject({
      state: "absent",
    });
    // An absent declaration still on the NIC: observed present (the view's sync calls that drift).
    const stays = stored({ scaleSetId: VM, state: "absent" });
    expect(observeOnVm(cachedVm(VM, [{ name: "nic-a", pools: [POOL_A] }]), stays, O)).toMatchObject({
      state: "present",
    });
  });

  it("knows nothing while one of the VM's NICs is not cached, naming it", () => {
    const vm = cachedVm(VM, [
      { name: "nic-a", pools: [POOL_A] },
      { name: "nic-b", pools: undefined },
    ]);
    expect(observeOnVm(vm, onVm, O)).toMatchObject({ state: "unknown", note: "NIC nic-b not read yet" });
  });

  it("carries the staleness of the VM's or a NIC's row", () => {
    const vm = cachedVm(VM, [{ name: "nic-a", pools: [POOL_A] }]);
    vm.nics[0]!.entry = { ...vm.nics[0]!.entry!, stale: true, staleReason: "412 on nic-a" };
    expect(observeOnVm(vm, onVm, O)).toMatchObject({ state: "present", stale: true, staleReason: "412 on nic-a" });
  });

  it("says nothing of a VM whose row holds no model", () => {
    const vm = cachedVm(VM, []);
    expect(observeOnVm({ ...vm, vm: cached<VmModel>(undefined) }, onVm, O)).toBeUndefined();
  });
});

describe("vmNicsViews", () => {
  it("lists each NIC's ip configurations with every pool on them, marking the declared ones", () => {
    const [view] = vmNicsViews([cachedVm(VM, [{ name: "nic-a", pools: [POOL_A, POOL_OTHER] }])], [onVm], O);
    expect(view).toMatchObject({ vmId: VM, stale: false });
    expect(view?.nics).toEqual([
      expect.objectContaining({
        nicId: nicId("nic-a"),
        name: "nic-a",
        primary: true,
        ipConfigurations: [
          {
            name: "ipconfig1",
            backendPools: [
              { id: POOL_A, declared: true },
              { id: POOL_OTHER, declared: false },
            ],
          },
        ],
      }),
    ]);
  });

  it("shows a NIC not read yet by its resource name, with no ip configuration and a note", () => {
    const [view] = vmNicsViews([cachedVm(VM, [{ name: "nic-a", pools: undefined }])], [onVm], O);
    expect(view?.nics[0]).toMatchObject({ name: "nic-a", note: "not read yet", ipConfigurations: [] });
  });
});

describe("freshnessOf", () => {
  it("tells a fresh row from one past the TTL or marked stale", () => {
    expect(freshnessOf(cached({ etag: '"e"' }), O)).toEqual({
      etag: '"e"',
      readAt: new Date(NOW - 60_000).toISOString(),
      stale: false,
    });
    expect(freshnessOf(cached({}, { readAt: NOW - TTL_MS }), O)).toMatchObject({
      stale: true,
      staleReason: "read 300 s ago, past the 300 s TTL",
    });
    expect(freshnessOf(cached({}, { stale: true }), O)).toMatchObject({ stale: true, staleReason: "marked stale" });
  });
});
