import { describe, expect, it } from "vitest";
import { parseBackendPoolId, parseComputeId, parseInstanceId, parseScaleSetId } from "../../src/core/resourceIds";

const SUB = "0b5e1c9a-7f3d-4e2a-9c1b-3d5f7a9b1c2d"; // made up
const VMSS = `/subscriptions/${SUB}/resourceGroups/Rg-1/providers/Microsoft.Compute/virtualMachineScaleSets/pool-a`;

describe("resource IDs", () => {
  it("parses a scale set ID in any letter case, keeping the given casing and a lower-case key", () => {
    const r = parseScaleSetId(
      VMSS.replace("resourceGroups", "resourcegroups").replace("Microsoft.Compute", "microsoft.compute"),
    );
    expect(r).toEqual({
      ok: true,
      value: {
        kind: "scaleSet",
        id: VMSS,
        key: VMSS.toLowerCase(),
        subscriptionId: SUB,
        resourceGroup: "Rg-1",
        name: "pool-a",
      },
    });
  });

  it("parses instance and backend pool IDs", () => {
    const vm = parseInstanceId(`${VMSS}/virtualMachines/7`);
    expect(vm.ok && vm.value.instanceId).toBe("7");
    expect(vm.ok && vm.value.scaleSet.name).toBe("pool-a");
    const pool = parseBackendPoolId(
      `/subscriptions/${SUB}/resourceGroups/net/providers/Microsoft.Network/loadBalancers/lb/backendAddressPools/be`,
    );
    expect(pool.ok && [pool.value.parent, pool.value.name]).toEqual(["lb", "be"]);
    expect(parseComputeId(`${VMSS}/virtualMachines/7`).ok && parseComputeId(`${VMSS}/virtualMachines/7`)).toMatchObject(
      { value: { kind: "instance" } },
    );
  });

  it.each([
    [42, "must be a string"],
    ["", "is empty"],
    [`${VMSS}?api-version=1`, "must not contain a query string or fragment"],
    [VMSS.replace("/pool-a", "/../pool-a"), 'must not contain "." or ".." segments'],
    [
      `${VMSS}/virtualMachines/0`,
      "is not a scale set ID (/subscriptions/{id}/resourceGroups/{rg}/providers/Microsoft.Compute/virtualMachineScaleSets/{name})",
    ],
    [VMSS.replace("Rg-1", ".."), 'must not contain "." or ".." segments'],
    [VMSS.replace("/providers", "//providers"), "has an empty path segment"],
    [VMSS.replace("pool-a", "pool%2Fa"), "must not contain encoded characters or backslashes"],
    [
      VMSS.replace("Microsoft.Compute/virtualMachineScaleSets", "Microsoft.Network/virtualNetworks"),
      'names provider type "Microsoft.Network/virtualNetworks", not Microsoft.Compute/virtualMachineScaleSets',
    ],
    [VMSS.replace(SUB, "not-a-guid"), 'subscription "not-a-guid" is not a GUID'],
    [`${VMSS}/`, "has an empty path segment"],
    [VMSS + "x".repeat(400), "is longer than 400 characters"],
    [VMSS.replace("pool-a", "pool a"), "must not contain white space or control characters"],
    // The Kelvin sign lower-cases to "k": it must not pass for Microsoft.Compute's "k"-less twin or any other name.
    [
      VMSS.replace("Microsoft.Compute", "Microsoft.Compute").replace("pool-a", "poo\u212A-a"),
      "must hold only ASCII characters",
    ],
    [VMSS.replace("Rg-1", "\u0420\u0413-1"), "must hold only ASCII characters"],
  ])("refuses %j: %s", (input, reason) => {
    expect(parseScaleSetId(input)).toEqual({ ok: false, reason });
  });

  it("refuses a provider spelt with a Kelvin sign, which JavaScript lower-cases to k", () => {
    expect(
      parseBackendPoolId(
        `/subscriptions/${SUB}/resourceGroups/net/providers/Microsoft.Networ\u212A/loadBalancers/lb/backendAddressPools/be`,
      ),
    ).toEqual({
      ok: false,
      reason: "must hold only ASCII characters",
    });
  });

  it("refuses a non-numeric instance ID and a pool of another type", () => {
    expect(parseInstanceId(`${VMSS}/virtualMachines/abc`)).toEqual({
      ok: false,
      reason: 'instance ID "abc" is not a number',
    });
    expect(
      parseBackendPoolId(
        `/subscriptions/${SUB}/resourceGroups/net/providers/Microsoft.Network/loadBalancers/lb/inboundNatRules/r`,
      ),
    ).toEqual({
      ok: false,
      reason:
        'names "Microsoft.Network/loadBalancers/…/inboundNatRules", not Microsoft.Network/loadBalancers/…/backendAddressPools, …/inboundNatPools or Microsoft.Network/applicationGateways/…/backendAddressPools',
    });
  });

  it("parses the three pool kinds (issue 43), each with its parent", () => {
    const net = `/subscriptions/${SUB}/resourceGroups/net/providers/Microsoft.Network`;
    expect(parseBackendPoolId(`${net}/loadBalancers/lb/inboundNatPools/ssh`)).toMatchObject({
      ok: true,
      value: { poolKind: "inboundNatPool", parent: "lb", name: "ssh" },
    });
    expect(parseBackendPoolId(`${net}/applicationGateways/agw/backendAddressPools/web`)).toMatchObject({
      ok: true,
      value: { poolKind: "applicationGatewayBackendPool", parent: "agw", name: "web" },
    });
    expect(parseBackendPoolId(`${net}/loadBalancers/lb/backendAddressPools/be`)).toMatchObject({
      ok: true,
      value: { poolKind: "loadBalancerBackendPool", parent: "lb", name: "be" },
    });
    expect(parseBackendPoolId(`${net}/applicationGateways/agw/inboundNatPools/x`)).toMatchObject({ ok: false });
  });
});
