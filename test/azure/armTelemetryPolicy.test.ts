import { describe, expect, it } from "vitest";
import { armOperationOf, exhaustedBucket, resourceTypeOf } from "../../src/azure/armTelemetryPolicy";

const RG = "/subscriptions/00000000-aaaa-4bbb-8ccc-000000000473/resourceGroups/rg/providers";
const VMSS = `${RG}/Microsoft.Compute/virtualMachineScaleSets/vmss`;

describe("armTelemetryPolicy's naming of ARM requests", () => {
  it("names a request by its resource type, without the resource's own names", () => {
    expect(resourceTypeOf(`${VMSS}/virtualMachines/3`)).toEqual({
      type: "Microsoft.Compute/virtualMachineScaleSets/virtualMachines",
      named: true,
    });
    expect(resourceTypeOf(`${VMSS}/virtualMachines`)).toEqual({
      type: "Microsoft.Compute/virtualMachineScaleSets/virtualMachines",
      named: false,
    });
    expect(resourceTypeOf("/subscriptions/x/resourceGroups/rg")).toEqual({ type: "subscription", named: false });
  });

  it("tells a GET of one resource, a LIST and an operation poll apart", () => {
    expect(armOperationOf("get", VMSS)).toEqual({
      operation: "GET Microsoft.Compute/virtualMachineScaleSets",
      kind: "scaleSet",
    });
    expect(armOperationOf("GET", `${VMSS}/virtualMachines`)).toEqual({
      operation: "GET Microsoft.Compute/virtualMachineScaleSets/virtualMachines (list)",
      kind: "list",
    });
    const poll = "/subscriptions/x/providers/Microsoft.Compute/locations/westeurope/operations/op-1";
    expect(armOperationOf("GET", poll).kind).toBe("operation");
    expect(armOperationOf("GET", `${VMSS}/virtualMachines/3`).kind).toBe("instance");
    expect(armOperationOf("PUT", `${RG}/Microsoft.Network/networkInterfaces/nic-0`).kind).toBe("nic");
  });

  it("blames a 429 on the CRP policy reported at 0, else on the subscription's bucket for the method", () => {
    expect(
      exhaustedBucket("GET", "Microsoft.Compute/GetVMScaleSet3Min;0,Microsoft.Compute/GetVMScaleSet30Min;500"),
    ).toBe("Microsoft.Compute/GetVMScaleSet3Min");
    expect(exhaustedBucket("GET", "Microsoft.Compute/GetVMScaleSet3Min;12")).toBe("subscription-reads");
    expect(exhaustedBucket("put", undefined)).toBe("subscription-writes");
  });
});
