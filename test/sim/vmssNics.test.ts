// A Uniform scale set instance's NICs through NRP's scale set network interface API (read-only), where a client reads
// the private addresses an IP-based pool lists: through real HTTP and @azure/arm-network, which sends api-version
// 2018-10-01 to these operations.
import type { NetworkManagementClient } from "@azure/arm-network";
import { afterEach, describe, expect, it } from "vitest";
import { startArmSimulator, type ArmSimulator, type SeedSpec } from "../../sim/index";
import { simNetworkClient } from "../../sim/networkClient";
import { LB, NIC_POOL, RG, SUB, SUBNET, VMSS, WORLD } from "./poolKindsWorld";

let sim: ArmSimulator | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

async function start(seed: SeedSpec = WORLD): Promise<{ sim: ArmSimulator; client: NetworkManagementClient }> {
  sim = await startArmSimulator({ seed });
  return { sim, client: simNetworkClient(sim, SUB) };
}

async function all<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

const nicId = (instance: number) => `${VMSS}/virtualMachines/${instance}/networkInterfaces/ss-nic`;

describe("a scale set instance's NICs (NRP's scale set network interface API)", () => {
  it("list every instance's NIC with a private address in its subnet, its pools and its NAT rule", async () => {
    const { client } = await start();
    const nics = await all(client.networkInterfaces.listVirtualMachineScaleSetNetworkInterfaces(RG, "ss"));
    expect(nics.map((n) => n.id)).toEqual([nicId(0), nicId(1)]);
    expect(nics[0]).toMatchObject({
      name: "ss-nic",
      provisioningState: "Succeeded",
      primary: true,
      virtualMachine: { id: `${VMSS}/virtualMachines/0` },
    });
    expect(nics.map((n) => n.ipConfigurations?.[0])).toEqual([
      expect.objectContaining({
        name: "ipc",
        id: `${nicId(0)}/ipConfigurations/ipc`,
        privateIPAddress: "10.0.1.4",
        privateIPAllocationMethod: "Dynamic",
        privateIPAddressVersion: "IPv4",
        primary: true,
        subnet: expect.objectContaining({ id: SUBNET }),
        loadBalancerBackendAddressPools: [expect.objectContaining({ id: NIC_POOL })],
        // As the spec's VmssNetworkInterfaceGet example: the NAT rule NRP derived, not the NAT pool.
        loadBalancerInboundNatRules: [expect.objectContaining({ id: `${LB}/inboundNatRules/ssh.0` })],
      }),
      expect.objectContaining({ privateIPAddress: "10.0.1.5" }),
    ]);
    expect(nics[0]?.ipConfigurations?.[0]).not.toHaveProperty("loadBalancerInboundNatPools");
  });

  it("an instance's NIC and ip configuration by name keep their address; unknown ones answer NRP's 404", async () => {
    const { client } = await start();
    const listed = await all(client.networkInterfaces.listVirtualMachineScaleSetVMNetworkInterfaces(RG, "ss", "1"));
    expect(listed.map((n) => n.id)).toEqual([nicId(1)]);
    const nic = await client.networkInterfaces.getVirtualMachineScaleSetNetworkInterface(RG, "ss", "1", "ss-nic");
    expect(nic.ipConfigurations?.[0]?.privateIPAddress).toBe(listed[0]?.ipConfigurations?.[0]?.privateIPAddress);
    const ipcs = await all(
      client.networkInterfaces.listVirtualMachineScaleSetIpConfigurations(RG, "ss", "1", "ss-nic"),
    );
    expect(ipcs.map((i) => i.name)).toEqual(["ipc"]);
    const ipc = await client.networkInterfaces.getVirtualMachineScaleSetIpConfiguration(RG, "ss", "1", "ss-nic", "ipc");
    expect(ipc.privateIPAddress).toBe(nic.ipConfigurations?.[0]?.privateIPAddress);
    await expect(
      client.networkInterfaces.getVirtualMachineScaleSetNetworkInterface(RG, "ss", "7", "ss-nic"),
    ).rejects.toMatchObject({ statusCode: 404, code: "NotFound" });
    await expect(
      client.networkInterfaces.getVirtualMachineScaleSetNetworkInterface(RG, "ss", "1", "nope"),
    ).rejects.toMatchObject({ statusCode: 404, code: "NotFound" });
  });

  it("addresses are distinct and stay with their instance; a scale-out gets the lowest free one", async () => {
    const { sim, client } = await start();
    const addresses = async () =>
      (await all(client.networkInterfaces.listVirtualMachineScaleSetNetworkInterfaces(RG, "ss"))).map(
        (n) => n.ipConfigurations?.[0]?.privateIPAddress,
      );
    expect(await addresses()).toEqual(["10.0.1.4", "10.0.1.5"]);
    sim.control.scale(VMSS, 3);
    sim.control.settle();
    expect(await addresses()).toEqual(["10.0.1.4", "10.0.1.5", "10.0.1.6"]);
    sim.control.scale(VMSS, 1);
    sim.control.settle();
    expect(await addresses()).toEqual(["10.0.1.4"]);
    sim.control.scale(VMSS, 2);
    sim.control.settle();
    expect(await addresses()).toEqual(["10.0.1.4", "10.0.1.5"]);
  });

  it("an IPv6 ip configuration gets an IPv6 address", async () => {
    const seed = structuredClone(WORLD);
    const ss = seed.subscriptions[0]?.resourceGroups[0]?.scaleSets?.[0];
    ss?.nics[0]?.ipConfigurations.push({ name: "ipc6", privateIPAddressVersion: "IPv6", subnet: "vnet/nodes" });
    const { client } = await start(seed);
    const nic = await client.networkInterfaces.getVirtualMachineScaleSetNetworkInterface(RG, "ss", "0", "ss-nic");
    expect(nic.ipConfigurations?.map((i) => [i.name, i.privateIPAddressVersion, i.privateIPAddress])).toEqual([
      ["ipc", "IPv4", "10.0.1.4"],
      ["ipc6", "IPv6", "fd00:5ca1::4"],
    ]);
  });
});
