// IP-based load balancer backend pools as NRP serves them, through the real @azure/arm-network client and plain HTTP:
// the pool lists its addresses, a pool PUT replaces it whole under If-Match on the load balancer's weak ETag, every
// pool's ETag moves with any write, writes run operations that block or are superseded, and an address must be in
// the load balancer's virtual network.
import type { BackendAddressPool, NetworkManagementClient } from "@azure/arm-network";
import { afterEach, describe, expect, it } from "vitest";
import { startArmSimulator, type ArmSimulator, type ArmSimulatorOptions } from "../../sim/index";
import { simNetworkClient } from "../../sim/networkClient";
import { arm } from "./testkit";
import {
  EMPTY_POOL,
  IP_POOL,
  LB,
  NIC_POOL,
  OTHER_VNET,
  RG,
  SUB,
  SUBNET,
  VM_NIC,
  VMSS,
  VNET,
  WORLD,
} from "./poolKindsWorld";

const POLL = { updateIntervalInMs: 5 };
const V = (v: string) => `?api-version=${v}`;
const WEAK = /^W\/"[0-9a-f-]{36}"$/;
const ifMatch = (etag: string | undefined) => ({ requestOptions: { headers: { "if-match": etag ?? "" } }, ...POLL });

let sim: ArmSimulator | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

async function start(opts: ArmSimulatorOptions = {}): Promise<{ sim: ArmSimulator; client: NetworkManagementClient }> {
  sim = await startArmSimulator({ seed: WORLD, ...opts });
  return { sim, client: simNetworkClient(sim, SUB) };
}

/** An address as the SDK models it (flattened) and as it travels (wire). */
const address = (name: string, ip: string, vnet = VNET) => ({ name, ipAddress: ip, virtualNetwork: { id: vnet } });
const wire = (name: string, ip: string, vnet = VNET, more: Record<string, string> = {}) => ({
  name,
  properties: { ipAddress: ip, virtualNetwork: { id: vnet }, ...more },
});

describe("an IP-based pool through NetworkManagementClient", () => {
  it("lists its addresses with their admin state; its ETag is its load balancer's", async () => {
    const { sim, client } = await start();
    const pool = await client.loadBalancerBackendAddressPools.get(RG, "lb", "ips");
    expect(
      pool.loadBalancerBackendAddresses?.map((a) => [a.name, a.ipAddress, a.virtualNetwork?.id, a.adminState]),
    ).toEqual([
      ["a1", "10.0.1.4", VNET, undefined],
      ["a2", "10.0.1.5", VNET, "Down"],
    ]);
    expect(pool.backendIPConfigurations).toBeUndefined();
    const lb = await client.loadBalancers.get(RG, "lb");
    expect(pool.etag).toMatch(WEAK);
    expect(pool.etag).toBe(lb.etag);
    const raw = await arm(sim.url, "GET", `${IP_POOL}${V("2024-07-01")}`);
    expect(raw.headers.get("etag")).toBe(lb.etag);
  });

  it("a pool PUT replaces the pool whole and moves every pool's ETag; the stale ETag then answers NRP's 412", async () => {
    const { sim, client } = await start();
    const before = await client.loadBalancerBackendAddressPools.get(RG, "lb", "ips");
    const written = await client.loadBalancerBackendAddressPools.createOrUpdate(
      RG,
      "lb",
      "ips",
      { loadBalancerBackendAddresses: [address("a3", "10.0.1.6")] },
      ifMatch(before.etag),
    );
    expect(written.loadBalancerBackendAddresses?.map((a) => a.name)).toEqual(["a3"]);
    expect(written.provisioningState).toBe("Succeeded");
    expect(written.etag).not.toBe(before.etag);
    const other = await client.loadBalancerBackendAddressPools.get(RG, "lb", "nics");
    expect(other.etag).toBe(written.etag);
    expect(sim.control.poolState(IP_POOL)?.addresses.map((a) => a.ipAddress)).toEqual(["10.0.1.6"]);

    const stale = await client.loadBalancerBackendAddressPools
      .createOrUpdate(RG, "lb", "ips", { loadBalancerBackendAddresses: [] }, ifMatch(before.etag))
      .catch((e: unknown) => e);
    expect(stale).toMatchObject({ statusCode: 412, code: "PreconditionFailed" });
    const raw = await arm(sim.url, "PUT", `${IP_POOL}${V("2024-07-01")}`, {
      body: { properties: { loadBalancerBackendAddresses: [] } },
      headers: { "if-match": "invalid" },
    });
    // Recorded (nrp-lb-put-412-precondition-failed): NRP echoes an unquoted value as weak and names the load balancer.
    expect(raw.body).toEqual({
      error: {
        code: "PreconditionFailed",
        message: "Precondition failed.",
        details: [
          {
            code: "PreconditionFailedEtagMismatch",
            message: `Etag provided in if-match header W/"invalid" does not match etag ${written.etag} of resource ${LB} in NRP data store.`,
          },
        ],
      },
    });
    expect(sim.control.poolState(IP_POOL)?.addresses.map((a) => a.name)).toEqual(["a3"]);
  });

  it("answers a pool write with Azure-AsyncOperation on NRP's operations and no ETag header; the event comes when it ends", async () => {
    const { sim } = await start({ loadBalancerWriteMs: 60_000 });
    const put = await arm(sim.url, "PUT", `${IP_POOL}${V("2024-07-01")}`, {
      body: { properties: { loadBalancerBackendAddresses: [wire("a1", "10.0.1.4")] } },
      headers: { "x-ms-client-request-id": "mine" },
    });
    expect(put.status).toBe(200);
    expect(put.headers.get("etag")).toBeNull();
    expect(put.body.properties.provisioningState).toBe("Updating");
    const op = put.headers.get("azure-asyncoperation") ?? "";
    expect(op).toMatch(
      /\/providers\/Microsoft\.Network\/locations\/westeurope\/operations\/[0-9a-f-]{36}\?api-version=2024-07-01$/,
    );
    expect((await arm(sim.url, "GET", op)).body).toEqual({ status: "InProgress" });
    const written = () => sim.control.events().filter((e) => e.data.httpRequest?.clientRequestId === "mine");
    expect(written()).toEqual([]);
    sim.control.clock.advance(60_000);
    expect((await arm(sim.url, "GET", op)).body).toEqual({ status: "Succeeded" });
    expect(written().map((e) => [e.eventType, e.data.operationName, e.subject])).toEqual([
      [
        "Microsoft.Resources.ResourceWriteSuccess",
        "Microsoft.Network/loadBalancers/backendAddressPools/write",
        IP_POOL,
      ],
    ]);
    expect((await arm(sim.url, "GET", `${IP_POOL}${V("2024-07-01")}`)).body.properties.provisioningState).toBe(
      "Succeeded",
    );
  });

  it("lists the load balancer's pools, and a load balancer PUT carries IP-based pools too", async () => {
    const { client } = await start();
    const pools: BackendAddressPool[] = [];
    for await (const p of client.loadBalancerBackendAddressPools.list(RG, "lb")) pools.push(p);
    expect(pools.map((p) => p.name)).toEqual(["ips", "nics", "empty"]);
    const lb = await client.loadBalancers.get(RG, "lb");
    const ips = lb.backendAddressPools?.find((p) => p.name === "ips");
    if (ips) ips.loadBalancerBackendAddresses = [address("only", "10.0.1.9")];
    const written = await client.loadBalancers.createOrUpdate(RG, "lb", lb, ifMatch(lb.etag));
    expect(written.etag).not.toBe(lb.etag);
    expect(
      written.backendAddressPools?.map((p) => [p.name, (p.loadBalancerBackendAddresses ?? []).map((a) => a.ipAddress)]),
    ).toEqual([
      ["ips", ["10.0.1.9"]],
      ["nics", []],
      ["empty", []],
    ]);
    expect(written.inboundNatPools?.map((p) => p.name)).toEqual(["ssh"]);
  });
});

describe("writes that meet a running write on the same load balancer", () => {
  const slow = { loadBalancerWriteMs: 60_000 };

  it("answer NRP's 409 AnotherOperationInProgress naming the running operation, until it ends", async () => {
    const { sim } = await start(slow);
    const first = await arm(sim.url, "PUT", `${IP_POOL}${V("2024-07-01")}`, {
      body: { properties: { loadBalancerBackendAddresses: [] } },
    });
    const opUrl = first.headers.get("azure-asyncoperation") ?? "";
    for (const [path, body] of [
      [EMPTY_POOL, { properties: {} }],
      [IP_POOL, { properties: {} }],
    ] as const) {
      const second = await arm(sim.url, "PUT", `${path}${V("2024-07-01")}`, { body });
      expect(second.status).toBe(409);
      expect(second.body.error.code).toBe("AnotherOperationInProgress");
      expect(second.body.error.message).toBe(
        `Another operation on this or dependent resource is in progress. To retrieve status of the operation use uri: ${opUrl}.`,
      );
    }
    expect(sim.control.poolState(IP_POOL)?.running.map((r) => r.name)).toEqual([
      "PutLoadBalancerBackendAddressPoolOperation",
    ]);
    sim.control.settle();
    expect((await arm(sim.url, "PUT", `${EMPTY_POOL}${V("2024-07-01")}`, { body: { properties: {} } })).status).toBe(
      200,
    );
  });

  it("a load balancer PUT cancels a pool PUT in flight: CanceledAndSupersededDueToAnotherOperation (azure-cli 21156)", async () => {
    const { sim, client } = await start(slow);
    const lb = await client.loadBalancers.get(RG, "lb");
    const pool = await arm(sim.url, "PUT", `${IP_POOL}${V("2024-07-01")}`, {
      body: { properties: { loadBalancerBackendAddresses: [wire("late", "10.0.1.30")] } },
      headers: { "x-ms-client-request-id": "pool-write" },
    });
    const poolOp = pool.headers.get("azure-asyncoperation") ?? "";
    // A tool that writes the whole load balancer it read before, without If-Match (the azure-cli case).
    const lbWrite = client.loadBalancers.createOrUpdate(RG, "lb", lb, POLL);
    await lbWrite.submitted();
    const poolOpId = /operations\/([^?]+)/.exec(poolOp)?.[1];
    const lbOpId = sim.control.poolState(IP_POOL)?.running[0]?.operationId;
    expect((await arm(sim.url, "GET", poolOp)).body).toEqual({
      status: "Canceled",
      error: {
        code: "Canceled",
        message: "Operation was canceled.",
        details: [
          {
            code: "CanceledAndSupersededDueToAnotherOperation",
            message: `Operation PutLoadBalancerBackendAddressPoolOperation (${poolOpId}) was canceled and superseded by operation PutLoadBalancerOperation (${lbOpId}).`,
          },
        ],
      },
    });
    expect(
      sim.control
        .events()
        .filter((e) => e.data.httpRequest?.clientRequestId === "pool-write")
        .map((e) => e.eventType),
    ).toEqual(["Microsoft.Resources.ResourceWriteCancel"]);
    sim.control.settle();
    await lbWrite.pollUntilDone();
    // The parent's body defines the pool: the canceled write's address is gone.
    expect(sim.control.poolState(IP_POOL)?.addresses.map((a) => a.name)).toEqual(["a1", "a2"]);
  });

  it("with supersedeRunningNetworkWrite a newer write cancels the running one instead of 409", async () => {
    const { sim } = await start({ ...slow, supersedeRunningNetworkWrite: true });
    const first = await arm(sim.url, "PUT", `${IP_POOL}${V("2024-07-01")}`, { body: { properties: {} } });
    const second = await arm(sim.url, "PUT", `${EMPTY_POOL}${V("2024-07-01")}`, { body: { properties: {} } });
    expect(second.status).toBe(200);
    const firstOp = await arm(sim.url, "GET", first.headers.get("azure-asyncoperation") ?? "");
    expect(firstOp.body.status).toBe("Canceled");
    expect(firstOp.body.error.details[0].code).toBe("CanceledAndSupersededDueToAnotherOperation");
  });
});

describe("what NRP refuses in an IP-based pool", () => {
  const put = (s: ArmSimulator, addresses: unknown[], version = "2024-07-01", path = IP_POOL) =>
    arm(s.url, "PUT", `${path}${V(version)}`, { body: { properties: { loadBalancerBackendAddresses: addresses } } });

  it("an address outside the load balancer's virtual network, or outside its address space, or of no network", async () => {
    const { sim } = await start();
    const before = sim.control.poolState(IP_POOL);
    const elsewhere = await put(sim, [wire("x", "10.9.0.4", OTHER_VNET)]);
    expect([elsewhere.status, elsewhere.body.error.code]).toEqual([
      400,
      "LoadBalancerBackendAddressNotInLoadBalancerVirtualNetwork",
    ]);
    const missing = await put(sim, [wire("x", "10.0.1.7", `${VNET}-gone`)]);
    expect([missing.status, missing.body.error.code]).toEqual([400, "InvalidResourceReference"]);
    const outside = await put(sim, [wire("x", "192.168.0.1")]);
    expect([outside.status, outside.body.error.code]).toEqual([400, "PrivateIPAddressNotInVirtualNetworkAddressSpace"]);
    const nowhere = await put(sim, [{ name: "x", properties: { ipAddress: "10.0.1.7" } }]);
    expect(nowhere.status).toBe(400);
    expect(nowhere.body.error.message).toMatch(
      /^properties\.loadBalancerBackendAddresses\[0\]\.properties needs a virtualNetwork or subnet/,
    );
    const viaSubnet = await put(sim, [{ name: "s", properties: { ipAddress: "10.0.1.8", subnet: { id: SUBNET } } }]);
    expect(viaSubnet.status).toBe(200);
    expect(before?.etag).not.toBe(sim.control.poolState(IP_POOL)?.etag);
  });

  it("addresses in a NIC-based pool, and an ip configuration joining an IP-based pool (one pool cannot mix them)", async () => {
    const { sim, client } = await start();
    sim.control.settle();
    const intoNicPool = await put(sim, [wire("x", "10.0.1.7")], "2024-07-01", NIC_POOL);
    expect([intoNicPool.status, intoNicPool.body.error.code]).toEqual([
      400,
      "CannotMixIPBasedAddressesAndIPConfigurationsOnLoadBalancerBackendAddressPool",
    ]);
    const nic = await client.networkInterfaces.get(RG, "vm-nic");
    const ipc = nic.ipConfigurations?.[0];
    if (ipc) ipc.loadBalancerBackendAddressPools = [{ id: IP_POOL }];
    const joined = await client.networkInterfaces
      .createOrUpdate(RG, "vm-nic", nic, ifMatch(nic.etag))
      .catch((e: unknown) => e);
    expect(joined).toMatchObject({
      statusCode: 400,
      code: "CannotMixIPBasedAddressesAndIPConfigurationsOnLoadBalancerBackendAddressPool",
    });
    const model = (await arm(sim.url, "GET", VMSS)).body;
    model.properties.virtualMachineProfile.networkProfile.networkInterfaceConfigurations[0].properties.ipConfigurations[0].properties.loadBalancerBackendAddressPools =
      [{ id: IP_POOL }];
    const vmss = await arm(sim.url, "PUT", VMSS, { body: model });
    expect([vmss.status, vmss.body.error.code]).toEqual([
      400,
      "CannotMixIPBasedAddressesAndIPConfigurationsOnLoadBalancerBackendAddressPool",
    ]);
    // An empty legacy pool is neither kind until its first member: IPs may go into it.
    expect((await put(sim, [wire("x", "10.0.1.7")], "2024-07-01", EMPTY_POOL)).status).toBe(200);
    expect(sim.control.poolState(EMPTY_POOL)?.poolKind).toBe("ip");
    expect(sim.control.resource(VM_NIC)).toBeDefined();
  });

  it("admin state as the api-version defines it: Drain only from 2022-01-01 to 2022-09-01, none before 2022-01-01", async () => {
    const { sim } = await start();
    const drain = (v: string) => put(sim, [wire("a1", "10.0.1.4", VNET, { adminState: "Drain" })], v);
    const refused = await drain("2024-07-01");
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: "InvalidRequestFormat" });
    expect(refused.body.error.details[0].message).toBe(
      'Value "Drain" of properties.loadBalancerBackendAddresses[0].properties.adminState is not one of None, Up, Down at api-version 2024-07-01.',
    );
    expect((await drain("2022-09-01")).status).toBe(200);
    expect(sim.control.poolState(IP_POOL)?.addresses[0]?.adminState).toBe("Drain");
    sim.control.settle();
    expect(
      (await put(sim, [wire("a1", "10.0.1.4", VNET, { adminState: "DOWN" })])).body.properties
        .loadBalancerBackendAddresses[0].properties.adminState,
    ).toBe("Down");
    sim.control.settle();
    const old = await arm(sim.url, "GET", `${IP_POOL}${V("2021-08-01")}`);
    expect(old.body.properties.loadBalancerBackendAddresses[0].properties).not.toHaveProperty("adminState");
    sim.control.settle();
    // A write at an api-version without the property drops it, as the PUT replaces the pool whole.
    expect((await put(sim, [wire("a1", "10.0.1.4", VNET, { adminState: "Down" })], "2021-08-01")).status).toBe(200);
    expect(sim.control.poolState(IP_POOL)?.addresses[0]).not.toHaveProperty("adminState");
  });
});

describe("a pool DELETE", () => {
  it("answers 202 with Azure-AsyncOperation and Location, which answers 202 then 204; the pool is gone", async () => {
    const { sim } = await start({ loadBalancerWriteMs: 60_000 });
    const del = await arm(sim.url, "DELETE", `${EMPTY_POOL}${V("2024-07-01")}`);
    expect(del.status).toBe(202);
    const location = del.headers.get("location") ?? "";
    expect(location).toMatch(/\/providers\/Microsoft\.Network\/locations\/westeurope\/operationResults\//);
    expect((await arm(sim.url, "GET", location)).status).toBe(202);
    sim.control.clock.advance(60_000);
    expect((await arm(sim.url, "GET", location)).status).toBe(204);
    expect((await arm(sim.url, "GET", `${EMPTY_POOL}${V("2024-07-01")}`)).status).toBe(404);
    expect((await arm(sim.url, "DELETE", `${EMPTY_POOL}${V("2024-07-01")}`)).status).toBe(204);
    expect(sim.control.events().at(-1)?.data.operationName).toBe(
      "Microsoft.Network/loadBalancers/backendAddressPools/delete",
    );
  });

  it("refuses a pool ip configurations or a scale set model use", async () => {
    const { sim } = await start();
    const del = await arm(sim.url, "DELETE", `${NIC_POOL}${V("2024-07-01")}`);
    expect([del.status, del.body.error.code]).toEqual([400, "InUseBackendAddressPoolCannotBeDeleted"]);
    expect(sim.control.poolState(NIC_POOL)?.poolKind).toBe("nic");
  });
});

describe("which pools list loadBalancerBackendAddresses", () => {
  const props = (body: { properties: { backendAddressPools: { name: string; properties: object }[] } }, n: string) =>
    body.properties.backendAddressPools.find((p) => p.name === n)?.properties;

  it("an IP-based pool its addresses; a pool made with its load balancer and not IP-based none; one the pool API made `[]`", async () => {
    const { sim } = await start();
    const lb = (await arm(sim.url, "GET", `${LB}${V("2024-07-01")}`)).body;
    expect(props(lb, "ips")).toHaveProperty("loadBalancerBackendAddresses", [
      expect.objectContaining({ name: "a1" }),
      expect.objectContaining({ name: "a2" }),
    ]);
    // NIC-based (the scale set model joins it) and undecided (empty), both made with their load balancer (recorded).
    expect(props(lb, "nics")).not.toHaveProperty("loadBalancerBackendAddresses");
    expect(props(lb, "empty")).not.toHaveProperty("loadBalancerBackendAddresses");
    const nics = await arm(sim.url, "GET", `${NIC_POOL}${V("2024-07-01")}`);
    expect(nics.body.properties).not.toHaveProperty("loadBalancerBackendAddresses");
    expect(nics.body.properties.backendIPConfigurations.length).toBeGreaterThan(0);

    // A pool the pool API makes answers `[]` (recorded), and keeps it through a load balancer PUT; a pool the load
    // balancer PUT makes does not.
    const made = await arm(sim.url, "PUT", `${LB}/backendAddressPools/made${V("2024-07-01")}`, {
      body: { properties: {} },
    });
    expect([made.status, made.body.properties.loadBalancerBackendAddresses]).toEqual([201, []]);
    sim.control.settle();
    const whole = (await arm(sim.url, "GET", `${LB}${V("2024-07-01")}`)).body;
    whole.properties.backendAddressPools.push({ name: "withLb", properties: {} });
    const put = await arm(sim.url, "PUT", `${LB}${V("2024-07-01")}`, { body: whole });
    expect(put.status).toBe(200);
    expect(props(put.body, "made")).toHaveProperty("loadBalancerBackendAddresses", []);
    expect(props(put.body, "withLb")).not.toHaveProperty("loadBalancerBackendAddresses");
    expect(props(put.body, "ips")).toHaveProperty("loadBalancerBackendAddresses");
  });

  it("a seed says which pools the pool API made (poolsMadeWithPoolApi)", async () => {
    const world = structuredClone(WORLD);
    const seeded = world.subscriptions[0]!.resourceGroups[0]!.loadBalancers![0]!;
    seeded.poolsMadeWithPoolApi = ["EMPTY"];
    const { sim } = await start({ seed: world });
    expect((await arm(sim.url, "GET", `${EMPTY_POOL}${V("2024-07-01")}`)).body.properties).toHaveProperty(
      "loadBalancerBackendAddresses",
      [],
    );
    expect((await arm(sim.url, "GET", `${NIC_POOL}${V("2024-07-01")}`)).body.properties).not.toHaveProperty(
      "loadBalancerBackendAddresses",
    );
  });
});
