// VM answers in both shapes the API specification shows: a VM whose NICs CRP built carries its own networkApiVersion
// and networkInterfaceConfigurations; a VM made with NIC references (the specification's example of a Flexible member)
// carries only `networkInterfaces: [{id, properties.primary}]`. The seed chooses which VMs answer which way.
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DEMO_SEED, startArmSimulator, type ArmSimulator, type SeedSpec } from "../../sim/index";
import { arm, RG_PATH } from "./testkit";

const FLEX = `${RG_PATH}/providers/Microsoft.Compute/virtualMachineScaleSets/etag-k8s-flex-0`;
const VM = `${RG_PATH}/providers/Microsoft.Compute/virtualMachines/etag-k8s-vm-0`;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;
const example = JSON.parse(
  readFileSync(
    path.resolve(__dirname, "../fixtures/azure/spec-examples/vm-flex-member-in-vmss-create.example.json"),
    "utf8",
  ),
) as Any;

/** The demo world with the Flexible scale set's and the standalone VM's network shapes set. */
function seedWith(flex: "nicConfigurations" | "nicReferences" | "alternating", vm: "nicConfigurations"): SeedSpec {
  const seed = structuredClone(DEMO_SEED);
  const rg = seed.subscriptions[0]!.resourceGroups[0]!;
  rg.scaleSets = rg.scaleSets!.map((s) =>
    s.orchestrationMode === "Flexible" ? { ...s, capacity: 4, vmNetworkProfile: flex } : s,
  );
  rg.virtualMachines = rg.virtualMachines!.map((v) => ({ ...v, networkProfile: vm }));
  return seed;
}

let sim: ArmSimulator | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

describe("VM network profiles in both shapes", () => {
  it("answers the seeded Flexible members alternately with and without their NIC configurations, as the specification's example shows the latter", async () => {
    sim = await startArmSimulator({ seed: seedWith("alternating", "nicConfigurations") });
    const ids = sim.control.virtualMachines(FLEX).map((v) => String(v["id"]));
    expect(ids).toHaveLength(4);
    const profiles = await Promise.all(
      ids.map(async (id) => (await arm(sim!.url, "GET", id)).body.properties.networkProfile as Any),
    );
    expect(profiles.map((p) => Object.keys(p).sort())).toEqual([
      ["networkApiVersion", "networkInterfaceConfigurations", "networkInterfaces"],
      ["networkInterfaces"],
      ["networkApiVersion", "networkInterfaceConfigurations", "networkInterfaces"],
      ["networkInterfaces"],
    ]);
    // The references-only shape is the specification's: NIC IDs with properties.primary.
    const shape = (p: Any) => ({
      keys: Object.keys(p),
      nic: Object.keys(p.networkInterfaces[0]),
      primary: typeof p.networkInterfaces[0].properties.primary,
    });
    expect(shape(profiles[1])).toEqual(shape(example.responses["200"].body.properties.networkProfile));
    // Whatever the shape, the NICs are the same resources.
    for (const p of profiles) expect(p.networkInterfaces[0].id).toMatch(/\/networkInterfaces\/etag-k8s-flex-0-/);
  });

  it("answers every member without NIC configurations when seeded so, and a standalone VM with them when seeded so", async () => {
    sim = await startArmSimulator({ seed: seedWith("nicReferences", "nicConfigurations") });
    for (const v of sim.control.virtualMachines(FLEX))
      expect(Object.keys((v["properties"] as Any).networkProfile)).toEqual(["networkInterfaces"]);
    const vm = (await arm(sim.url, "GET", VM)).body.properties.networkProfile;
    expect(vm.networkApiVersion).toBe("2020-11-01");
    expect(vm.networkInterfaceConfigurations.map((c: Any) => c.name)).toEqual(["etag-k8s-vm-0-nic"]);
    expect(vm.networkInterfaces).toEqual([
      { id: expect.stringMatching(/\/networkInterfaces\/etag-k8s-vm-0-nic$/), properties: expect.anything() },
    ]);
  });

  it("keeps the shapes it always had by default: Flexible members with their NIC configurations, standalone VMs without", async () => {
    sim = await startArmSimulator({ seed: "demo" });
    for (const v of sim.control.virtualMachines(FLEX))
      expect((v["properties"] as Any).networkProfile.networkInterfaceConfigurations).toHaveLength(1);
    expect(Object.keys((await arm(sim.url, "GET", VM)).body.properties.networkProfile)).toEqual(["networkInterfaces"]);
  });
});
