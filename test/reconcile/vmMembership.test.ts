import { describe, expect, it } from "vitest";
import { QUEUE_DECLARER, toIntent, type StoredDeclaration } from "../../src/core/declarations";
import type { ScaleSetModel } from "../../src/core/models";
import type { NicConfiguration } from "../../src/core/networkProfile";
import { orchestrationModeOf, vmOutcomes } from "../../src/reconcile/vmMembership";
import type { VmNicResult } from "../../src/reconcile/vmNics";

/** Membership on VMs' NICs: which orchestration modes are known, and each declaration's outcome from every VM (pure). */
const RG = "/subscriptions/00000000-0000-0000-0000-0000000000b3/resourceGroups/rg";
const POOL = `${RG}/providers/Microsoft.Network/loadBalancers/lb/backendAddressPools/pool-a`;
const FLEX = `${RG}/providers/Microsoft.Compute/virtualMachineScaleSets/flex`;

const nics = (pools: string[]): NicConfiguration[] => [
  {
    name: "nic",
    primary: true,
    ipConfigurations: [
      { name: "ipconfig1", primary: true, loadBalancerBackendAddressPools: pools.map((id) => ({ id })) },
    ],
  },
];

function declared(state: "present" | "absent", ipConfiguration = ""): StoredDeclaration {
  return {
    scaleSetId: FLEX,
    backendPoolId: POOL,
    ipConfiguration,
    state,
    declaredAt: "2026-12-02T10:00:00.000Z",
    requestId: `req-${state}-${ipConfiguration}`,
    declaredBy: QUEUE_DECLARER,
    outcome: { kind: "pending", at: "2026-12-02T10:00:00.000Z" },
    attempts: 0,
    rowEtag: "W/1",
  };
}

function vm(name: string, pools: string[], extra: Partial<VmNicResult> = {}): VmNicResult {
  return {
    vmId: `${RG}/providers/Microsoft.Compute/virtualMachines/${name}`,
    written: 0,
    gone: false,
    view: nics(pools),
    outcomes: [{ ok: true }],
    observed: true,
    resources: [],
    ...extra,
  };
}

const model = (pools: string[]): ScaleSetModel => ({
  id: FLEX,
  etag: "W/model-7",
  location: "westeurope",
  provisioningState: "Succeeded",
  capacity: 2,
  nics: nics(pools),
  orchestrationMode: "Flexible",
});

const failed = (reason: string) => ({ kind: "failed" as const, reason });

describe("orchestrationModeOf", () => {
  it("knows Uniform (also when ARM leaves it out) and Flexible in any case, and nothing else", () => {
    expect(orchestrationModeOf({ ...model([]), orchestrationMode: undefined })).toBe("Uniform");
    expect(orchestrationModeOf({ ...model([]), orchestrationMode: "flexible" })).toBe("Flexible");
    expect(orchestrationModeOf({ ...model([]), orchestrationMode: "Hybrid" })).toBeUndefined();
  });
});

describe("vmOutcomes", () => {
  it("applies a declaration with the model's ETag once the model and every live VM hold it", () => {
    const ds = [declared("present")];
    const out = vmOutcomes(ds, ds.map(toIntent), [vm("a", [POOL]), vm("b", [POOL])], model([POOL]), failed);
    expect(out).toEqual([{ kind: "applied", appliedEtag: "W/model-7" }]);
  });

  it("an absent is applied everywhere only when no live VM still holds the pool; a gone VM does not count", () => {
    const ds = [declared("absent")];
    const intents = ds.map(toIntent);
    expect(vmOutcomes(ds, intents, [vm("a", []), vm("b", [POOL], { gone: true })], model([]), failed)).toEqual([
      { kind: "applied", appliedEtag: "W/model-7", appliedEverywhere: true },
    ]);
    expect(vmOutcomes(ds, intents, [vm("a", []), vm("b", [POOL])], model([]), failed)).toEqual([
      { kind: "applied", appliedEtag: "W/model-7" },
    ]);
  });

  it("fails a declaration that cannot be placed on a VM, naming the VM", () => {
    const ds = [declared("present")];
    const stuck = vm("vm-7", [], { outcomes: [{ ok: false, reason: "no ip configuration ipconfig9" }] });
    expect(vmOutcomes(ds, ds.map(toIntent), [vm("a", [POOL]), stuck], undefined, failed)).toEqual([
      { kind: "failed", reason: "VM vm-7: no ip configuration ipconfig9" },
    ]);
  });

  it("fails a declaration the Flexible model cannot place, with the model's reason, before any VM's", () => {
    const ds = [declared("present", "nope")];
    const [out] = vmOutcomes(ds, ds.map(toIntent), [vm("a", [])], model([]), failed);
    expect(out).toMatchObject({ kind: "failed" });
    expect(out!.reason).not.toMatch(/^VM /);
    expect(out!.reason).toMatch(/nope/);
  });
});
