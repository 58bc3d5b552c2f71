// Network RP NICs, top-level VMs and Flexible scale sets in the simulator, over HTTP and through the real
// @azure/arm-network and @azure/arm-compute clients.
import { afterEach, describe, expect, it } from "vitest";
import { simComputeClient } from "../../sim/client";
import { startArmSimulator, type ArmSimulator, type ArmSimulatorOptions } from "../../sim/index";
import { simNetworkClient } from "../../sim/networkClient";
import { arm, LB_PATH, POOL_ID, RG_PATH, SUB, SUBNET_ID } from "./testkit";

const FLEX_PATH = `${RG_PATH}/providers/Microsoft.Compute/virtualMachineScaleSets/etag-k8s-flex-0`;
const VM_PATH = `${RG_PATH}/providers/Microsoft.Compute/virtualMachines/etag-k8s-vm-0`;
const VM_NIC_PATH = `${RG_PATH}/providers/Microsoft.Network/networkInterfaces/etag-k8s-vm-0-nic`;
const V6_POOL_ID = `${LB_PATH}/backendAddressPools/etag-k8s-v6`;
const WEAK = /^W\/"[0-9a-f-]{36}"$/;

let sim: ArmSimulator | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

async function start(opts: ArmSimulatorOptions = {}): Promise<ArmSimulator> {
  sim = await startArmSimulator({ seed: "demo", ...opts });
  return sim;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

describe("top-level VMs", () => {
  it("lists a Flexible scale set's VMs by resource group and subscription, with the scale set and their NICs", async () => {
    const s = await start();
    const byRg = await arm(s.url, "GET", `${RG_PATH}/providers/Microsoft.Compute/virtualMachines`);
    const bySub = await arm(s.url, "GET", `/subscriptions/${SUB}/providers/Microsoft.Compute/virtualMachines`);
    expect(byRg.status).toBe(200);
    expect(bySub.body.value).toEqual(byRg.body.value);
    const flex = (byRg.body.value as Any[]).filter((v) => v.properties.virtualMachineScaleSet?.id === FLEX_PATH);
    expect(flex).toHaveLength(2);
    const standalone = (byRg.body.value as Any[]).find((v) => v.id === VM_PATH);
    expect(standalone.properties.virtualMachineScaleSet).toBeUndefined();
    // A LIST item names its NICs without properties.primary (recorded); a GET has it.
    expect(standalone.properties.networkProfile.networkInterfaces).toEqual([{ id: VM_NIC_PATH }]);
    expect((await arm(s.url, "GET", VM_PATH)).body.properties.networkProfile.networkInterfaces).toEqual([
      { id: VM_NIC_PATH, properties: { primary: true, deleteOption: "Delete" } },
    ]);
    for (const vm of flex) {
      expect(vm.properties.provisioningState).toBe("Succeeded");
      const nicId = vm.properties.networkProfile.networkInterfaces[0].id as string;
      const nic = await arm(s.url, "GET", nicId);
      expect(nic.body.properties.virtualMachine).toEqual({ id: vm.id });
      expect(
        (nic.body.properties.ipConfigurations as Any[]).map((c) => [
          c.name,
          c.properties.privateIPAddressVersion,
          c.properties.primary,
          c.properties.subnet.id,
        ]),
      ).toEqual([
        ["ipConfig0", "IPv4", true, SUBNET_ID],
        ["ipConfig0-v6", "IPv6", false, SUBNET_ID],
      ]);
    }
    const one = await arm(s.url, "GET", VM_PATH);
    expect({ ...one.body, properties: { ...one.body.properties, networkProfile: undefined } }).toEqual({
      ...standalone,
      properties: { ...standalone.properties, networkProfile: undefined },
    });
  });

  it("refuses the VMSS VM API on a Flexible scale set", async () => {
    const s = await start();
    const list = await arm(s.url, "GET", `${FLEX_PATH}/virtualMachines`);
    expect(list.status).toBe(400);
    expect(list.body.error.code).toBe("OperationNotAllowed");
    const put = await arm(s.url, "PUT", `${FLEX_PATH}/virtualMachines/0`, { body: { properties: {} } });
    expect(put.status).toBe(400);
  });
});

describe("Flexible scale set model", () => {
  it("refuses a model write whose network profile lacks networkApiVersion, and accepts it with", async () => {
    const s = await start();
    const ss = await arm(s.url, "GET", FLEX_PATH);
    const network = ss.body.properties.virtualMachineProfile.networkProfile;
    expect(network.networkApiVersion).toBe("2020-11-01");
    const nics = network.networkInterfaceConfigurations;
    const without = await arm(s.url, "PUT", FLEX_PATH, {
      body: {
        location: "eastus2",
        properties: {
          virtualMachineProfile: { networkProfile: { networkApiVersion: "", networkInterfaceConfigurations: nics } },
        },
      },
    });
    expect(without.status).toBe(400);
    expect(without.body.error.code).toBe("NetworkApiVersionMustBeSpecifiedWithNetworkInterfaceConfigurations");
    const ok = await arm(s.url, "PUT", FLEX_PATH, {
      body: { location: "eastus2", tags: { a: "b" } },
      headers: { "if-match": ss.body.etag },
    });
    expect(ok.status).toBe(200);
  });

  it("builds scale-out VMs and their NICs from the model as it is; existing VMs' NICs stay as they were", async () => {
    const s = await start();
    s.control.write(FLEX_PATH, (r: Any) => {
      r.properties.virtualMachineProfile.networkProfile.networkInterfaceConfigurations[0].properties.ipConfigurations[0].properties.loadBalancerBackendAddressPools =
        [{ id: POOL_ID }];
      r.sku.capacity = 3;
    });
    s.control.settle();
    const vms = s.control.virtualMachines(FLEX_PATH) as Any[];
    expect(vms).toHaveLength(3);
    expect(vms.every((v) => v.properties.provisioningState === "Succeeded")).toBe(true);
    const members = s.control.poolMembers(POOL_ID);
    expect(members).toEqual([
      `${vms[2].properties.networkProfile.networkInterfaces[0].id as string}/ipConfigurations/ipConfig0`,
    ]);
    s.control.scale(FLEX_PATH, 1);
    s.control.settle();
    expect(s.control.virtualMachines(FLEX_PATH)).toHaveLength(1);
    expect(s.control.poolMembers(POOL_ID)).toEqual([]);
  });
});

describe("network interfaces", () => {
  it("answers weak ETags, a new one on each write (synchronously, the etag in the body only), replaces the NIC whole, and reports the write as an event", async () => {
    const s = await start();
    const before = await arm(s.url, "GET", VM_NIC_PATH);
    expect(before.headers.get("etag")).toMatch(WEAK);
    expect(before.body.etag).toBe(before.headers.get("etag"));
    expect(before.body.properties.ipConfigurations[0].etag).toBe(before.body.etag);
    const body = structuredClone(before.body) as Any;
    body.tags = { keep: "me" };
    body.properties.ipConfigurations[0].properties.loadBalancerBackendAddressPools = [{ id: POOL_ID }];
    const put = await arm(s.url, "PUT", VM_NIC_PATH, {
      body,
      headers: { "if-match": before.body.etag, "x-ms-client-request-id": "ours-1" },
    });
    // As recorded: 200, Succeeded, no Azure-AsyncOperation and no ETag header.
    expect(put.status).toBe(200);
    expect(put.headers.get("etag")).toBeNull();
    expect(put.headers.get("azure-asyncoperation")).toBeNull();
    expect(put.body.properties.provisioningState).toBe("Succeeded");
    expect(put.body.etag).toMatch(WEAK);
    expect(put.body.etag).not.toBe(before.body.etag);
    expect(s.control.poolMembers(POOL_ID)).toEqual([`${VM_NIC_PATH}/ipConfigurations/ipConfig0`]);
    const lb = await arm(s.url, "GET", LB_PATH);
    expect(lb.body.properties.backendAddressPools[0].properties.backendIPConfigurations).toEqual([
      { id: `${VM_NIC_PATH}/ipConfigurations/ipConfig0` },
    ]);
    const event = s.control.events().find((e) => e.data.operationName === "Microsoft.Network/networkInterfaces/write");
    expect(event?.data.httpRequest?.clientRequestId).toBe("ours-1");
    expect(event?.subject).toBe(VM_NIC_PATH);
    // Full replacement: a PUT without the tags drops them.
    const again = structuredClone((await arm(s.url, "GET", VM_NIC_PATH)).body) as Any;
    delete again.tags;
    await arm(s.url, "PUT", VM_NIC_PATH, { body: again });
    expect(s.control.resource(VM_NIC_PATH)?.["tags"]).toBeUndefined();
  });

  it("with nicWriteAsync, answers an operation and the ETag header instead", async () => {
    const s = await start({ nicWriteAsync: true, operationDurationMs: 5_000 });
    const before = await arm(s.url, "GET", VM_NIC_PATH);
    const put = await arm(s.url, "PUT", VM_NIC_PATH, { body: before.body, headers: { "if-match": before.body.etag } });
    expect(put.status).toBe(200);
    expect(put.headers.get("etag")).toMatch(WEAK);
    expect(put.headers.get("azure-asyncoperation")).toMatch(
      new RegExp(`/subscriptions/${SUB}/providers/Microsoft.Network/locations/eastus2/operations/[0-9a-f-]+\\?`),
    );
    expect((await arm(s.url, "GET", put.headers.get("azure-asyncoperation") as string)).body.status).toBe("InProgress");
    s.control.settle();
    expect((await arm(s.url, "GET", put.headers.get("azure-asyncoperation") as string)).body.status).toBe("Succeeded");
  });

  it("compares If-Match as NRP does: an unquoted or strong value is taken as weak and echoed W/", async () => {
    const s = await start();
    const before = await arm(s.url, "GET", VM_NIC_PATH);
    const bare = (before.body.etag as string).replace(/^W\//, "");
    expect((await arm(s.url, "PUT", VM_NIC_PATH, { body: before.body, headers: { "if-match": bare } })).status).toBe(
      200,
    );
    const stale = await arm(s.url, "PUT", VM_NIC_PATH, { body: before.body, headers: { "if-match": "invalid" } });
    expect(stale.status).toBe(412);
    expect(stale.body.error.details[0].message).toContain('if-match header W/"invalid" does not match');
  });

  it("answers a stale If-Match with NRP's 412 and its PreconditionFailedEtagMismatch detail", async () => {
    const s = await start();
    const read = await arm(s.url, "GET", VM_NIC_PATH);
    s.control.write(VM_NIC_PATH, (r) => {
      r["tags"] = { other: "writer" };
    });
    const current = s.control.resource(VM_NIC_PATH)?.["etag"] as string;
    const stale = await arm(s.url, "PUT", VM_NIC_PATH, { body: read.body, headers: { "if-match": read.body.etag } });
    expect(stale.status).toBe(412);
    expect(stale.body).toEqual({
      error: {
        code: "PreconditionFailed",
        message: "Precondition failed.",
        details: [
          {
            code: "PreconditionFailedEtagMismatch",
            message: `Etag provided in if-match header ${read.body.etag as string} does not match etag ${current} of resource ${VM_NIC_PATH} in NRP data store.`,
          },
        ],
      },
    });
    expect(s.control.resource(VM_NIC_PATH)?.["tags"]).toEqual({ other: "writer" });
  });

  it("refuses one pool on ip configurations of different IP versions, and references that do not exist", async () => {
    const s = await start();
    const vm = (s.control.virtualMachines(FLEX_PATH) as Any[])[0];
    const nicId = vm.properties.networkProfile.networkInterfaces[0].id as string;
    const nic = structuredClone((await arm(s.url, "GET", nicId)).body) as Any;
    for (const c of nic.properties.ipConfigurations)
      c.properties.loadBalancerBackendAddressPools = [{ id: V6_POOL_ID }];
    const mixed = await arm(s.url, "PUT", nicId, { body: nic });
    expect(mixed.status).toBe(400);
    expect(mixed.body.error.code).toBe(
      "LoadBalancerBackendAddressPoolReferencedByIpConfigurationsOfDifferentIpVersions",
    );
    nic.properties.ipConfigurations[0].properties.loadBalancerBackendAddressPools = [
      { id: `${LB_PATH}/backendAddressPools/nope` },
    ];
    expect((await arm(s.url, "PUT", nicId, { body: nic })).body.error.code).toBe("InvalidResourceReference");
  });

  it("lets the interleaved writer change a NIC just before our write: an If-Match write then gets 412", async () => {
    const s = await start();
    const read = await arm(s.url, "GET", VM_NIC_PATH);
    const handle = s.control.beforeNextWrite(VM_NIC_PATH, (r) => {
      r["tags"] = { raced: "yes" };
    });
    const put = await arm(s.url, "PUT", VM_NIC_PATH, { body: read.body, headers: { "if-match": read.body.etag } });
    expect(handle.applied()).toBe(1);
    expect(put.status).toBe(412);
    expect(s.control.stats(VM_NIC_PATH)).toMatchObject({ nicPuts: 1, status412: 1 });
  });

  it("works with the real NetworkManagementClient and ComputeManagementClient", async () => {
    const s = await start();
    const network = simNetworkClient(s, SUB, { additionalPolicies: [] });
    const compute = simComputeClient(s, SUB);
    const vms = [];
    for await (const vm of compute.virtualMachines.list("etag")) vms.push(vm);
    expect(vms.filter((v) => v.virtualMachineScaleSet?.id === FLEX_PATH)).toHaveLength(2);
    const nic = await network.networkInterfaces.get("etag", "etag-k8s-vm-0-nic");
    expect(nic.etag).toMatch(WEAK);
    const ipc = nic.ipConfigurations?.[0];
    if (ipc) ipc.loadBalancerBackendAddressPools = [{ id: POOL_ID }];
    const written = await network.networkInterfaces.beginCreateOrUpdateAndWait("etag", "etag-k8s-vm-0-nic", nic, {
      updateIntervalInMs: 5,
      requestOptions: { headers: { "if-match": nic.etag ?? "" } },
    });
    expect(written.etag).toMatch(WEAK);
    expect(written.etag).not.toBe(nic.etag);
    expect(s.control.poolMembers(POOL_ID)).toEqual([`${VM_NIC_PATH}/ipConfigurations/ipConfig0`]);
  });
});
