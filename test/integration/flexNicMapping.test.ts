// A VM's NICs are mapped from what Azure states, never from NIC names: a Flexible VM's NICs are not named after its
// NIC configurations (cloud-provider-azure issues 2670 and 4823), so "nic/ipconfig" is placed through the VM's own
// NIC configurations (primary flag, ip configuration names); the primary NIC is the flagged one, or the only one; a
// declaration that cannot be placed with certainty fails with the reason and writes nothing.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEMO, startHarness, type Harness } from "../support/harness";
import { nicPoolsByIpConfig } from "../../sim/wire";
import type { JsonObject, SeedSpec } from "../../sim";
import { parseTargetId } from "../../src/core/resourceIds";

const SUB = DEMO.subscription;
const RG = `/subscriptions/${SUB}/resourceGroups/nics/providers`;
const FLEX = `${RG}/Microsoft.Compute/virtualMachineScaleSets/flex-two-nics`;
const VM = `${RG}/Microsoft.Compute/virtualMachines/vm-two-nics`;
const POOL = `${RG}/Microsoft.Network/loadBalancers/lb/backendAddressPools/pool`;
const pool = POOL.toLowerCase();

const ipc = (name: string) => ({ name, subnet: "vnet/subnet" });

const WORLD: SeedSpec = {
  subscriptions: [
    {
      id: SUB,
      resourceGroups: [
        {
          name: "nics",
          location: "eastus2",
          virtualNetworks: [{ name: "vnet", subnets: [{ name: "subnet" }] }],
          loadBalancers: [{ name: "lb", backendPools: ["pool"] }],
          scaleSets: [
            {
              name: "flex-two-nics",
              capacity: 2,
              orchestrationMode: "Flexible",
              // The primary NIC configuration is listed second; both hold an ip configuration "shared".
              nics: [
                { name: "frontend", ipConfigurations: [ipc("shared"), ipc("frontend-ip")] },
                { name: "backend", primary: true, ipConfigurations: [ipc("shared")] },
              ],
            },
          ],
          // Two NICs, neither flagged primary.
          virtualMachines: [
            {
              name: "vm-two-nics",
              nics: [
                { name: "vm-two-nics-a", ipConfigurations: [ipc("ipconfig1")] },
                { name: "vm-two-nics-b", ipConfigurations: [ipc("ipconfig1")] },
              ],
            },
          ],
        },
      ],
    },
  ],
};

const declare = (targetId: string, extra: Record<string, unknown> = {}) => ({
  v: 1,
  kind: "declare",
  targetId,
  backendPoolId: POOL,
  state: "present",
  ...extra,
});

function target(id: string) {
  const r = parseTargetId(id);
  if (!r.ok) throw new Error(r.reason);
  return r.value;
}

describe("a VM's NICs mapped from what Azure states, never from their names", () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness({ sim: { seed: WORLD } });
  });
  afterEach(async () => {
    await h.stop();
  });

  /** Each Flexible VM's NICs, by the NIC configuration the simulator built them from (its record, not the name). */
  const flexNics = (): { nic: string; configuration: string }[] =>
    h.sim.control.virtualMachines(FLEX).flatMap((vm) => {
      const p = vm["properties"] as {
        networkProfile: { networkInterfaces: { id: string }[]; networkInterfaceConfigurations: { name: string }[] };
      };
      return p.networkProfile.networkInterfaces.map((n, i) => ({
        nic: n.id,
        configuration: p.networkProfile.networkInterfaceConfigurations[i]?.name ?? "",
      }));
    });

  it("Flexible: 'frontend/shared' lands on each VM's NIC built from the frontend configuration, though no NIC is named after it", async () => {
    const nics = flexNics();
    expect(nics).toHaveLength(4);
    for (const { nic } of nics) expect(nic.toLowerCase()).not.toMatch(/frontend|backend/);

    await h.send(declare(FLEX, { ipConfiguration: "frontend/shared" }));
    await h.drain();

    const [decl] = await h.services.declarations.listForTarget(target(FLEX));
    expect(decl?.outcome, JSON.stringify(decl?.outcome)).toMatchObject({ kind: "applied" });
    for (const { nic, configuration } of nics) {
      const pools = nicPoolsByIpConfig(h.sim.control.resource(nic) as JsonObject);
      expect(pools["shared"], `${nic} (${configuration})`).toEqual(configuration === "frontend" ? [pool] : []);
    }
  });

  it("Flexible: 'shared' alone goes on the primary NIC, the one flagged primary (listed second)", async () => {
    await h.send(declare(FLEX, { ipConfiguration: "shared" }));
    await h.drain();
    const [decl] = await h.services.declarations.listForTarget(target(FLEX));
    expect(decl?.outcome, JSON.stringify(decl?.outcome)).toMatchObject({ kind: "applied" });
    for (const { nic, configuration } of flexNics()) {
      expect(
        nicPoolsByIpConfig(h.sim.control.resource(nic) as JsonObject)["shared"],
        `${nic} (${configuration})`,
      ).toEqual(configuration === "backend" ? [pool] : []);
    }
  });

  it("a VM with several NICs and none flagged primary: a declaration without a NIC fails with the reason and writes nothing", async () => {
    await h.send(declare(VM, { ipConfiguration: "ipconfig1" }));
    await h.drain();
    const [decl] = await h.services.declarations.listForTarget(target(VM));
    expect(decl?.outcome.kind).toBe("failed");
    expect(decl?.outcome.reason).toMatch(/2 NICs and none is flagged primary/);
    expect(h.sim.control.stats().nicPuts).toBe(0);
    // Naming the NIC places it with certainty.
    await h.send(declare(VM, { ipConfiguration: "vm-two-nics-b/ipconfig1" }));
    await h.drain();
    // Two declarations now (the selector is part of one): the NIC-naming one applied, the other still failed.
    const kinds = (await h.services.declarations.listForTarget(target(VM))).map((d) => d.outcome.kind).sort();
    expect(kinds).toEqual(["applied", "failed"]);
    expect(
      nicPoolsByIpConfig(
        h.sim.control.resource(`${RG}/Microsoft.Network/networkInterfaces/vm-two-nics-b`) as JsonObject,
      )["ipconfig1"],
    ).toEqual([pool]);
    expect(
      nicPoolsByIpConfig(
        h.sim.control.resource(`${RG}/Microsoft.Network/networkInterfaces/vm-two-nics-a`) as JsonObject,
      )["ipconfig1"],
    ).toEqual([]);
  });
});
