// Targets: a scale set or a top-level VM, in IDs, queue messages (schema v1, scaleSetId kept) and dual stack.
import { describe, expect, it } from "vitest";
import { parseQueueMessage, targetField } from "../../src/core/messages";
import { parseNicId, parseTargetId } from "../../src/core/resourceIds";

const SUB = "0b5e1c9a-7f3d-4e2a-9c1b-3d5f7a9b1c2d";
const RG = `/subscriptions/${SUB}/resourceGroups/rg/providers`;
const scaleSetId = `${RG}/Microsoft.Compute/virtualMachineScaleSets/vmss`;
const vmId = `${RG}/Microsoft.Compute/virtualMachines/vmss_1a2b3c4d`;
const backendPoolId = `${RG}/Microsoft.Network/loadBalancers/lb/backendAddressPools/be`;

describe("parseTargetId", () => {
  it("takes a scale set or a VM, in any casing, and keeps the casing given", () => {
    expect(parseTargetId(scaleSetId)).toMatchObject({ ok: true, value: { kind: "scaleSet", name: "vmss" } });
    expect(
      parseTargetId(vmId.replace("Microsoft.Compute/virtualMachines", "microsoft.compute/VIRTUALMACHINES")),
    ).toMatchObject({
      ok: true,
      value: { kind: "vm", name: "vmss_1a2b3c4d", id: vmId, key: vmId.toLowerCase() },
    });
  });

  it("refuses a Uniform scale set's VM, and anything else, with the reason", () => {
    expect(parseTargetId(`${scaleSetId}/virtualMachines/3`)).toEqual({
      ok: false,
      reason:
        "is a VM of a Uniform scale set: its pools follow its scale set, so declare the scale set (.../virtualMachineScaleSets/{name})",
    });
    expect(parseTargetId(`${RG}/Microsoft.Web/sites/x`)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^is neither a scale set ID/),
    });
    expect(parseTargetId(`${RG}/Microsoft.Compute/virtualMachines/bad name`)).toMatchObject({ ok: false });
  });

  it("parses NIC IDs", () => {
    expect(parseNicId(`${RG}/Microsoft.Network/networkInterfaces/nic-0`)).toMatchObject({
      ok: true,
      value: { kind: "nic", name: "nic-0", resourceGroup: "rg" },
    });
    expect(parseNicId(vmId)).toMatchObject({
      ok: false,
      reason: 'names provider type "Microsoft.Compute/virtualMachines", not Microsoft.Network/networkInterfaces',
    });
  });
});

describe("queue messages name a target", () => {
  const declare = { v: 1, kind: "declare", backendPoolId, state: "present" };

  it("accept scaleSetId exactly as before, or targetId (scale set or VM), and ipVersion", () => {
    expect(parseQueueMessage({ ...declare, scaleSetId }).ok).toBe(true);
    expect(parseQueueMessage({ ...declare, targetId: vmId, ipVersion: "IPv6" }).ok).toBe(true);
    expect(parseQueueMessage({ v: 1, kind: "reconcile", targetId: vmId, reason: "event" }).ok).toBe(true);
  });

  it.each([
    [{ ...declare }, "targetId: is required (or scaleSetId)"],
    [{ ...declare, scaleSetId, targetId: scaleSetId }, "targetId: give targetId or scaleSetId, not both"],
    [
      { ...declare, scaleSetId: vmId },
      'scaleSetId: names provider type "Microsoft.Compute/virtualMachines", not Microsoft.Compute/virtualMachineScaleSets',
    ],
    [
      { ...declare, targetId: `${scaleSetId}/virtualMachines/0` },
      "targetId: is a VM of a Uniform scale set: its pools follow its scale set, so declare the scale set (.../virtualMachineScaleSets/{name})",
    ],
    [{ ...declare, targetId: vmId, ipVersion: "IPv5" }, 'ipVersion: must be "IPv4" or "IPv6"'],
    [
      { ...declare, targetId: vmId, ipVersion: "IPv6", ipConfiguration: "ipConfig0" },
      "ipVersion: give ipVersion or ipConfiguration, not both",
    ],
  ])("refuses %j: %s", (message, reason) => {
    expect(parseQueueMessage(message)).toEqual({ ok: false, reason });
  });

  it("producers name scale sets with scaleSetId (schema v1 as it was), VMs with targetId", () => {
    expect(targetField(scaleSetId)).toEqual({ scaleSetId });
    expect(targetField(vmId)).toEqual({ targetId: vmId });
  });
});
