import { describe, expect, it } from "vitest";
import { driftAnswer, type MembershipWithDrift } from "../../src/intake/driftView";
import { observeScaleSet } from "../../src/intake/observedState";
import { resourceId, vmChips, vmNicTable } from "../../src/intake/vmNicHtml";
import { cachedVm, DRIFT, nicId, OPTIONS, POOL_A, POOL_OTHER, stored, VM } from "./viewFixtures";

/**
 * src/intake/vmNicHtml.ts: a VM target's NICs on the status page: one row per ip configuration with the pools on it,
 * ours and others', and per membership how many VMs hold it.
 */
const VM_2 = VM.replace(/vm-1$/, "vm-2");
const view = observeScaleSet(VM, [stored({ scaleSetId: VM })], { scaleSet: undefined, instances: new Map() }, OPTIONS, {
  vms: [
    cachedVm(VM, [{ name: "vm-1-nic", pools: [POOL_A, POOL_OTHER] }]),
    cachedVm(VM_2, [{ name: "vm-2-nic", pools: [] }]),
  ],
  truncated: false,
});
const flat = (s: unknown) => String(s).replace(/\s+/g, " ");

describe("vmNicTable", () => {
  it("shows each ip configuration's pools, naming another writer's pool as not declared here", () => {
    const text = flat(vmNicTable(view.vms, view.memberships));
    expect(text).toContain("NICs (2 VMs)");
    expect(text).toContain(`<span class="chip ok" title="${POOL_A}" >lb / a</span >`);
    expect(text).toContain(
      `<span class="chip idle" title="${POOL_OTHER}" >lb / someone-else (not declared here)</span >`,
    );
    expect(text).toContain('<span class="empty">no pool</span>');
  });

  it("marks the NIC another writer changed with its drift", () => {
    const [m] = view.memberships;
    const drifted: MembershipWithDrift = {
      ...m!,
      drift: driftAnswer({ ...DRIFT, resourceId: nicId("vm-2-nic").toUpperCase() }),
    };
    const rows = flat(vmNicTable(view.vms, [drifted])).split("<tr>");
    expect(rows.find((r) => r.includes("vm-2-nic"))).toContain("drift by ops-script");
    expect(rows.find((r) => r.includes("vm-1-nic"))).not.toContain("drift by");
  });

  it("says when no VM is cached yet, and shows nothing for a Uniform scale set (no VMs to show)", () => {
    expect(flat(vmNicTable([], []))).toContain("No VM cached yet");
    expect(vmNicTable(undefined, [])).toBe("");
  });
});

describe("vmChips", () => {
  it("counts the VMs that hold the membership as declared, one chip per VM", () => {
    const text = flat(vmChips(view.memberships[0]!));
    expect(text).toContain("1/2 VMs present");
    expect(text).toMatch(/chip ok" title="[^"]*" >vm-1 present/);
    expect(text).toMatch(/chip bad" title="[^"]*" >vm-2 absent/);
  });
});

describe("resourceId", () => {
  it("shows the last segments of an ID and keeps it whole to hover and copy", () => {
    const text = flat(resourceId(nicId("vm-1-nic")));
    expect(text).toContain(`title="${nicId("vm-1-nic")}">…/networkInterfaces/vm-1-nic</span`);
    expect(text).toContain(`value="${nicId("vm-1-nic")}"`);
  });
});
