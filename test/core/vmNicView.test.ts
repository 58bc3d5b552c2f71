import { describe, expect, it } from "vitest";
import type { NicModel, VmModel } from "../../src/core/models";
import type { NicConfiguration, PoolIntent } from "../../src/core/networkProfile";
import { modelNicConfigurations, outcomesOn, uncertain, viewOf } from "../../src/core/vmNicView";

const RG = "/subscriptions/0b5e1c9a-7f3d-4e2a-9c1b-3d5f7a9b1c2d/resourceGroups/flex"; // made up
const POOL = `${RG}/providers/Microsoft.Network/loadBalancers/lb/backendAddressPools/be`;
const nicId = (name: string) => `${RG}/providers/Microsoft.Network/networkInterfaces/${name}`;

const nic = (name: string, ipConfigs: string[]): NicModel => ({
  id: nicId(name),
  etag: "e",
  provisioningState: "Succeeded",
  nic: { name, ipConfigurations: ipConfigs.map((c) => ({ name: c })) },
});

const vm = (fields: Partial<VmModel>): VmModel => ({
  id: `${RG}/providers/Microsoft.Compute/virtualMachines/web-1`,
  etag: "e",
  provisioningState: "Succeeded",
  scaleSetId: undefined,
  nicIds: [],
  primaryNicId: undefined,
  ...fields,
});

/** A Flexible VM's own NIC configurations: two alike but for the primary flag. */
const FRONT_BACK = [
  { name: "front", primary: true, ipConfigurationNames: ["ipconfig1"] },
  { name: "back", primary: false, ipConfigurationNames: ["ipconfig1"] },
];

const onNic = (nicName: string | undefined): PoolIntent => ({
  backendPoolId: POOL,
  selector: nicName ? { kind: "named", nic: nicName, ipConfiguration: "ipconfig1" } : { kind: "primary" },
  state: "present",
});

describe("a VM's NICs seen as NIC configurations", () => {
  it("names a standalone VM's NICs by their resource names and flags the VM's primary one", () => {
    const view = viewOf(vm({ primaryNicId: nicId("b").toUpperCase() }), [
      nic("a", ["ipconfig1"]),
      nic("b", ["ipconfig1"]),
    ]);
    expect(view.nics.map((n) => [n.name, n.primary])).toEqual([
      ["a", false],
      ["b", true],
    ]);
    expect(view).toMatchObject({ unplaced: [], noPrimary: false });
    const flaggedByNic = { ...nic("a", ["ipconfig1"]), nic: { ...nic("a", ["ipconfig1"]).nic, primary: true } };
    const own = viewOf(vm({}), [nic("b", ["ipconfig1"]), flaggedByNic]);
    expect(own.nics.map((n) => n.primary)).toEqual([false, true]);
  });

  it("names a Flexible VM's NICs by the configuration they were built from, never by the NIC's own name", () => {
    const view = viewOf(vm({ scaleSetId: "vmss", primaryNicId: nicId("web-1-nic-0"), nicConfigurations: FRONT_BACK }), [
      nic("web-1-nic-1", ["ipconfig1"]),
      nic("web-1-nic-0", ["ipconfig1"]),
    ]);
    expect(view.nics.map((n) => n.name)).toEqual(["back", "front"]);
    expect(view.unplaced).toEqual([]);
  });

  it("maps a Flexible VM that answers only NIC references on its scale set model's configurations", () => {
    const model: NicConfiguration[] = [
      { name: "front", primary: true, ipConfigurations: [{ name: "ipconfig1" }] },
      { name: "mgmt", primary: false, ipConfigurations: [{ name: "ipv4" }, { name: "ipv6" }] },
    ];
    const view = viewOf(
      vm({ scaleSetId: "vmss", primaryNicId: nicId("n0") }),
      [nic("n0", ["ipconfig1"]), nic("n1", ["ipv6", "IPv4"])],
      modelNicConfigurations(model),
    );
    expect(view.nics.map((n) => n.name)).toEqual(["front", "mgmt"]);
  });

  it("refuses the primary NIC of a VM with several NICs and none flagged, asking to name the NIC", () => {
    const view = viewOf(vm({}), [nic("a", ["ipconfig1"]), nic("b", ["ipconfig1"])]);
    expect(view.noPrimary).toBe(true);
    expect(uncertain(view, onNic(undefined))).toContain(
      'none is flagged primary: name the NIC in the declaration ("nic/ipconfig")',
    );
    expect(uncertain(view, onNic("a"))).toBeUndefined();
  });

  it("fails an intent on a configuration no NIC can be matched to with certainty, and places the others", () => {
    const view = viewOf(vm({ scaleSetId: "vmss", primaryNicId: nicId("n0"), nicConfigurations: FRONT_BACK }), [
      nic("n0", ["ipconfig1"]),
      nic("n1", ["other"]),
    ]);
    expect(view.unplaced).toEqual([
      "NIC n1 of VM web-1 matches none of the VM's NIC configurations by primary flag and ip configuration names (other)",
    ]);
    const [front, back] = outcomesOn(view, [onNic("front"), onNic("back")]);
    expect(front).toEqual({ ok: true });
    expect(back).toMatchObject({
      ok: false,
      reason: expect.stringContaining('"back" cannot be placed with certainty'),
    });
  });

  it("leaves both NICs unplaced when two match one configuration", () => {
    const view = viewOf(
      vm({
        scaleSetId: "vmss",
        nicConfigurations: [{ name: "only", primary: undefined, ipConfigurationNames: ["ipconfig1"] }],
      }),
      [nic("n0", ["ipconfig1"]), nic("n1", ["ipconfig1"])],
    );
    expect(view.nics.map((n) => n.name)).toEqual(["n0", "n1"]);
    expect(view.unplaced).toContain('NICs of VM web-1 match NIC configuration "only" more than once');
  });
});
