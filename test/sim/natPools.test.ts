// Inbound NAT pools: rendered on their load balancer, joined from scale set ip configurations
// (`loadBalancerInboundNatPools`), shown by the NAT rules NRP derives per instance, and checked as references.
import type { NetworkManagementClient } from "@azure/arm-network";
import { afterEach, describe, expect, it } from "vitest";
import { startArmSimulator, type ArmSimulator } from "../../sim/index";
import { simNetworkClient } from "../../sim/networkClient";
import { arm, nicsOf } from "./testkit";
import { LB, NAT_POOL, RG, SUB, VMSS, WORLD } from "./poolKindsWorld";

let sim: ArmSimulator | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

async function start(): Promise<{ sim: ArmSimulator; client: NetworkManagementClient }> {
  sim = await startArmSimulator({ seed: WORLD });
  return { sim, client: simNetworkClient(sim, SUB) };
}

const ipcOf = (instance: number) => `${VMSS}/virtualMachines/${instance}/networkInterfaces/ss-nic/ipConfigurations/ipc`;

describe("inbound NAT pools", () => {
  it("are rendered on the load balancer, and each joined instance shows as a NAT rule <pool>.<instance>", async () => {
    const { sim, client } = await start();
    const lb = await client.loadBalancers.get(RG, "lb");
    expect(lb.inboundNatPools).toEqual([
      expect.objectContaining({
        name: "ssh",
        id: NAT_POOL,
        etag: lb.etag,
        type: "Microsoft.Network/loadBalancers/inboundNatPools",
        protocol: "Tcp",
        frontendPortRangeStart: 50000,
        frontendPortRangeEnd: 50099,
        backendPort: 22,
        provisioningState: "Succeeded",
      }),
    ]);
    expect(
      lb.inboundNatRules?.map((r) => [r.name, r.frontendPort, r.backendPort, r.backendIPConfiguration?.id]),
    ).toEqual([
      ["ssh.0", 50000, 22, ipcOf(0)],
      ["ssh.1", 50001, 22, ipcOf(1)],
    ]);
    expect(sim.control.poolMembers(NAT_POOL)).toEqual([ipcOf(0), ipcOf(1)]);
    expect(sim.control.poolState(NAT_POOL)).toMatchObject({
      kind: "inboundNatPool",
      etag: lb.etag,
      ipConfigurations: [ipcOf(0), ipcOf(1)],
      addresses: [],
    });
  });

  it("a scale set leaving the pool leaves the derived rules once its instances take the model", async () => {
    const { sim } = await start();
    sim.control.write(VMSS, (r) => {
      delete nicsOf(r)[0].properties.ipConfigurations[0].properties.loadBalancerInboundNatPools;
    });
    sim.control.settle(); // the model write's operation ends, on the simulator's clock (a manualUpgrade meets 409 until then)
    expect(sim.control.poolMembers(NAT_POOL)).toHaveLength(2); // Manual upgrades: the instances still have it
    const up = await arm(sim.url, "POST", `${VMSS}/manualUpgrade`, { body: { instanceIds: ["0", "1"] } });
    expect(up.status).toBe(202);
    sim.control.settle();
    expect(sim.control.poolMembers(NAT_POOL)).toEqual([]);
    expect((await arm(sim.url, "GET", `${LB}?api-version=2024-07-01`)).body.properties.inboundNatRules).toEqual([]);
  });

  it("an unknown NAT pool in a scale set model answers NRP's 400 InvalidResourceReference, as for a backend pool", async () => {
    const { sim } = await start();
    const model = (await arm(sim.url, "GET", VMSS)).body;
    const gone = `${LB}/inboundNatPools/nope`;
    nicsOf(model)[0].properties.ipConfigurations[0].properties.loadBalancerInboundNatPools = [{ id: gone }];
    const put = await arm(sim.url, "PUT", VMSS, { body: model });
    expect(put.status).toBe(400);
    expect(put.body.error).toEqual({
      code: "InvalidResourceReference",
      message: `Resource ${gone} referenced by resource ${VMSS} was not found. Please make sure that the referenced resource exists, and that both resources are in the same region.`,
    });
  });

  it("a load balancer PUT that drops a NAT pool in use is refused; one that keeps it may change it", async () => {
    const { sim, client } = await start();
    const lb = await client.loadBalancers.get(RG, "lb");
    const dropped = await client.loadBalancers
      .createOrUpdate(RG, "lb", { ...lb, inboundNatPools: [] }, { updateIntervalInMs: 5 })
      .catch((e: unknown) => e);
    expect(dropped).toMatchObject({ statusCode: 400, code: "InUseInboundNatPoolCannotBeDeleted" });
    const pool = lb.inboundNatPools?.[0];
    if (pool) pool.backendPort = 2222;
    const kept = await client.loadBalancers.createOrUpdate(RG, "lb", lb, { updateIntervalInMs: 5 });
    expect(kept.inboundNatPools?.[0]?.backendPort).toBe(2222);
    // The derived rules are not stored back: the PUT echoed them, the answer still has one per instance.
    expect(kept.inboundNatRules?.map((r) => [r.name, r.backendPort])).toEqual([
      ["ssh.0", 2222],
      ["ssh.1", 2222],
    ]);
    expect(sim.control.events().at(-1)?.data.operationName).toBe("Microsoft.Network/loadBalancers/write");
  });
});
