// A Flexible scale set whose VMs answer only their NIC references (the API specification's shape, a seed's choice in
// the simulator): poolsync finds each VM's NIC from `networkInterfaces` and puts it in the pool all the same.
import { describe, expect, it } from "vitest";
import { DEMO_SEED, type SeedSpec } from "../../sim";
import { DEMO, startHarness } from "../support/harness";

const FLEX = `/subscriptions/${DEMO.subscription}/resourceGroups/etag/providers/Microsoft.Compute/virtualMachineScaleSets/etag-k8s-flex-0`;

function seedWith(vmNetworkProfile: "nicReferences" | "alternating"): SeedSpec {
  const seed = structuredClone(DEMO_SEED);
  const rg = seed.subscriptions[0]!.resourceGroups[0]!;
  rg.scaleSets = rg.scaleSets!.map((s) => (s.orchestrationMode === "Flexible" ? { ...s, vmNetworkProfile } : s));
  return seed;
}

describe("Flexible VMs that answer without their NIC configurations", () => {
  it("still get their NICs into the declared pool", async () => {
    const h = await startHarness({ sim: { seed: seedWith("nicReferences") } });
    try {
      const vms = h.sim.control.virtualMachines(FLEX);
      for (const vm of vms)
        expect(Object.keys((vm["properties"] as { networkProfile: object }).networkProfile)).toEqual([
          "networkInterfaces",
        ]);
      await h.send({ v: 1, kind: "declare", targetId: FLEX, backendPoolId: DEMO.poolId, state: "present" });
      await h.drainUntilEmpty(60_000);
      const nicIds = vms.map(
        (vm) =>
          (vm["properties"] as { networkProfile: { networkInterfaces: { id: string }[] } }).networkProfile
            .networkInterfaces[0]!.id,
      );
      expect(
        h.sim.control
          .poolMembers(DEMO.poolId)
          .map((m) => m.replace(/\/ipConfigurations\/.*$/, ""))
          .sort(),
      ).toEqual([...nicIds].sort());
    } finally {
      await h.stop();
    }
  });
});
