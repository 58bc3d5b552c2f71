import { describe, expect, it } from "vitest";
import { readChargeOf } from "../../src/azure/readCharges";

const SUB = "00000000-aaaa-4bbb-8ccc-000000000453";
const RG = `/subscriptions/${SUB}/resourceGroups/rg/providers`;
const VMSS = `${RG}/Microsoft.Compute/virtualMachineScaleSets/vmss-a`;

describe("readChargeOf", () => {
  it("charges a scale set GET and an instance GET to CRP's per-resource buckets, keyed by the lower-case path", () => {
    expect(readChargeOf(VMSS)).toEqual({
      subscriptionId: SUB,
      crp: "GetVMScaleSet",
      resource: VMSS.toLowerCase().slice(1),
    });
    expect(readChargeOf(`${VMSS}/virtualMachines/3`)).toMatchObject({ crp: "GetVMScaleSetVM" });
    expect(readChargeOf(`${RG}/Microsoft.Compute/virtualMachines/vm-1`)).toMatchObject({ crp: "GetVM" });
  });

  it("charges every LIST of scale sets, instances or VMs to the shared high-cost bucket", () => {
    expect(readChargeOf(`${RG}/Microsoft.Compute/virtualMachineScaleSets`)).toEqual({
      subscriptionId: SUB,
      crp: "HighCostGetVMScaleSet",
    });
    expect(readChargeOf(`${VMSS}/virtualMachines`)).toMatchObject({ crp: "HighCostGetVMScaleSet" });
    expect(readChargeOf(`${RG}/Microsoft.Compute/virtualMachines`)).toMatchObject({ crp: "HighCostGetVMScaleSet" });
  });

  it("charges operation polls to GetOperation", () => {
    const poll = `/subscriptions/${SUB}/providers/Microsoft.Compute/locations/westeurope/operations/op-1`;
    expect(readChargeOf(poll)).toEqual({ subscriptionId: SUB, crp: "GetOperation" });
  });

  it("charges Network reads, and a scale set's NICs at any depth, to NRP", () => {
    expect(readChargeOf(`${RG}/Microsoft.Network/loadBalancers/lb`)).toEqual({ subscriptionId: SUB, nrp: true });
    expect(readChargeOf(`${VMSS}/virtualMachines/3/networkInterfaces/nic/ipConfigurations/ip`)).toEqual({
      subscriptionId: SUB,
      nrp: true,
    });
  });

  it("charges only ARM's bucket for other paths, and nothing it can tell for paths outside a subscription", () => {
    expect(readChargeOf(`/subscriptions/${SUB}/resourceGroups/rg`)).toEqual({ subscriptionId: SUB });
    expect(readChargeOf("/providers/Microsoft.Compute/operations")).toBeUndefined();
    expect(readChargeOf("/subscriptions/%E0%A4%A")).toBeUndefined();
  });
});
