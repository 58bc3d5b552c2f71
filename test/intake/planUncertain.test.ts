import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SeedSpec } from "../../sim";
import { DEMO } from "../support/harness";
import { json, startIntakeApp, type IntakeApp } from "./support";

/**
 * GET /api/plan and PUT ?dryRun=true on a VM whose NIC a declaration cannot be placed on with certainty (two NICs,
 * neither flagged primary, and the declaration names no NIC): the reconcile would fail it with the reason and write
 * nothing, so the plan must say that reason and plan no NIC write, not a write the reconcile would never make.
 */

const SUB = DEMO.subscription;
const RG = `/subscriptions/${SUB}/resourceGroups/nics/providers`;
const VM = `${RG}/Microsoft.Compute/virtualMachines/vm-two-nics`;
const POOL = `${RG}/Microsoft.Network/loadBalancers/lb/backendAddressPools/pool`;
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

type Plan = {
  writes: { kind: string; id: string }[];
  unplaceable: { backendPoolId: string; ipConfiguration: string; reason: string }[];
};

let app: IntakeApp;
beforeAll(async () => {
  // The simulator answers the plan's reads; the queue trigger stays off, so the declaration stays as declared.
  app = await startIntakeApp({
    reconcile: true,
    seed: WORLD,
    env: { "AzureWebJobs.applyBackendPools.Disabled": "true" },
  });
});
afterAll(async () => {
  await app?.stop();
});

describe("the plan of a VM whose NIC placement is uncertain", () => {
  it("GET /api/plan names the reason the reconcile would fail it with, and plans no NIC write", async () => {
    const put = await fetch(
      `${app.url}/api/memberships`,
      json({ targetId: VM, backendPoolId: POOL, state: "present", ipConfiguration: "ipconfig1" }),
    );
    expect(put.status).toBe(202);
    const res = await fetch(`${app.url}/api/plan?targetId=${encodeURIComponent(VM)}`);
    expect(res.status).toBe(200);
    const plan = (await res.json()) as Plan;
    expect(plan.writes).toEqual([]);
    expect(plan.unplaceable).toEqual([
      {
        backendPoolId: POOL,
        ipConfiguration: "ipconfig1",
        reason: expect.stringMatching(/^VM vm-two-nics: the VM has 2 NICs and none is flagged primary/),
      },
    ]);
    expect(app.sim!.control.stats().nicPuts).toBe(0);
  });

  it("a dry run naming the NIC plans its write on that NIC alone, and still names the uncertain one", async () => {
    const res = await fetch(
      `${app.url}/api/memberships?dryRun=true`,
      json({ targetId: VM, backendPoolId: POOL, state: "present", ipConfiguration: "vm-two-nics-b/ipconfig1" }),
    );
    expect(res.status).toBe(200);
    const { plan } = (await res.json()) as { plan: Plan };
    expect(plan.writes.map((w) => [w.kind, w.id.split("/").pop()])).toEqual([["nic", "vm-two-nics-b"]]);
    expect(plan.unplaceable.map((u) => u.ipConfiguration)).toEqual(["ipconfig1"]);
  });
});
