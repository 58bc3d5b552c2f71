// The simulator's answers and the bodies it takes, held against Azure's OpenAPI definitions (the vendored subset in
// test/fixtures/azure/openapi): representative traffic, errors included, through plain HTTP and the real SDK clients,
// leaves no violation; and the check does catch what does not fit.
import { afterEach, describe, expect, it } from "vitest";
import { simComputeClient } from "../../sim/client";
import { startArmSimulator, type ArmSimulator } from "../../sim/index";
import { simNetworkClient } from "../../sim/networkClient";
import { azureSpecs } from "../support/azureSpecs";
import * as kinds from "./poolKindsWorld";
import { arm, instanceChange, LB_PATH, POOL_ID, RG_PATH, SUB, VMSS_PATH } from "./testkit";

let sim: ArmSimulator | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

const FLEX = `${RG_PATH}/providers/Microsoft.Compute/virtualMachineScaleSets/etag-k8s-flex-0`;
const VM = `${RG_PATH}/providers/Microsoft.Compute/virtualMachines/etag-k8s-vm-0`;
const NIC = `${RG_PATH}/providers/Microsoft.Network/networkInterfaces/etag-k8s-vm-0-nic`;

describe("the simulator against Azure's API definitions", () => {
  it("answers every kind of request it serves, and takes every body the SDKs send, as the definitions describe them", async () => {
    sim = await startArmSimulator({ seed: "demo", operationDurationMs: 0, specConformance: azureSpecs() });
    const s = sim;
    const compute = simComputeClient(s, SUB);
    const network = simNetworkClient(s, SUB);
    // Reads.
    const vmss = await compute.virtualMachineScaleSets.get("etag", "etag-k8s-mp-0");
    for await (const _ of compute.virtualMachineScaleSets.list("etag"));
    for await (const _ of compute.virtualMachineScaleSets.listAll());
    for await (const _ of compute.virtualMachineScaleSetVMs.list("etag", "etag-k8s-mp-0"));
    const inst = await compute.virtualMachineScaleSetVMs.get("etag", "etag-k8s-mp-0", "0");
    await compute.virtualMachines.get("etag", "etag-k8s-vm-0");
    for await (const _ of compute.virtualMachines.list("etag"));
    for await (const _ of compute.virtualMachines.listAll());
    const nic = await network.networkInterfaces.get("etag", "etag-k8s-vm-0-nic");
    await network.loadBalancers.get("etag", "etag-k8s");
    await network.loadBalancerBackendAddressPools.get("etag", "etag-k8s", "etag-k8s");
    // Writes as the SDKs send them: the model, an instance, a NIC.
    const nics = vmss.virtualMachineProfile!.networkProfile!.networkInterfaceConfigurations!;
    nics[0]!.ipConfigurations![0]!.loadBalancerBackendAddressPools = [{ id: POOL_ID }];
    await compute.virtualMachineScaleSets.createOrUpdate(
      "etag",
      "etag-k8s-mp-0",
      { location: vmss.location, virtualMachineProfile: { networkProfile: { networkInterfaceConfigurations: nics } } },
      { ifMatch: vmss.etag, updateIntervalInMs: 5 },
    );
    await compute.virtualMachineScaleSets.update(
      "etag",
      "etag-k8s-mp-0",
      { tags: { a: "1" } },
      { updateIntervalInMs: 5 },
    );
    await compute.virtualMachineScaleSetVMs.update(
      "etag",
      "etag-k8s-mp-0",
      "0",
      { ...inst, networkProfileConfiguration: { networkInterfaceConfigurations: nics } },
      { ifMatch: inst.etag, updateIntervalInMs: 5 },
    );
    await compute.virtualMachineScaleSets.updateInstances(
      "etag",
      "etag-k8s-mp-0",
      { instanceIds: ["1"] },
      {
        updateIntervalInMs: 5,
      },
    );
    nic.ipConfigurations![0]!.loadBalancerBackendAddressPools = [{ id: POOL_ID }];
    // If-Match as poolsync sends it on a NIC (the SDK has no option for it).
    await network.networkInterfaces.createOrUpdate("etag", "etag-k8s-vm-0-nic", nic, {
      requestOptions: { headers: { "if-match": nic.etag ?? "*" } },
      updateIntervalInMs: 5,
    });
    s.control.settle();
    // The answers the seeds' shapes give: Flexible members with and without NIC configurations.
    for (const v of s.control.virtualMachines(FLEX)) await arm(s.url, "GET", String(v["id"]));
    // Errors: 404s, a stale If-Match (412), a non-numeric instance ID (400), bad JSON.
    await arm(s.url, "GET", `${VMSS_PATH}-nope`);
    await arm(s.url, "GET", `${LB_PATH}/backendAddressPools/nope`);
    await arm(s.url, "PATCH", VMSS_PATH, { headers: { "if-match": '"99"' }, body: { tags: { b: "2" } } });
    await arm(s.url, "PUT", `${VMSS_PATH}/virtualMachines/x`, { body: instanceChange("x") });
    await arm(s.url, "PUT", NIC, {
      headers: { "if-match": 'W/"stale"' },
      body: { location: "eastus2", properties: {} },
    });
    await arm(s.url, "GET", VM);

    const record = s.control.specRecord()!;
    expect(record.violations).toEqual([]);
    expect(record.checked).toBeGreaterThan(25);
    // Only the operation polls lie outside the definitions' paths (their URLs are the answers' own).
    expect(record.uncovered.every((u) => /\/locations\/\{\}\/operations\/\{\}$/.test(u))).toBe(true);
  });

  it("answers the routes of load balancers, pools of every kind, gateways and scale set NICs, and takes their bodies, as the definitions describe them", async () => {
    sim = await startArmSimulator({ seed: kinds.WORLD, operationDurationMs: 0, specConformance: azureSpecs() });
    const s = sim;
    const network = simNetworkClient(s, kinds.SUB);
    const poll = { updateIntervalInMs: 5 };
    const ifMatch = (etag: string | undefined) => ({
      requestOptions: { headers: { "if-match": etag ?? "" } },
      ...poll,
    });
    // Load balancer and pools, read and written through @azure/arm-network as a client would.
    const lb = await network.loadBalancers.get(kinds.RG, "lb");
    for await (const _ of network.loadBalancerBackendAddressPools.list(kinds.RG, "lb"));
    const ips = await network.loadBalancerBackendAddressPools.get(kinds.RG, "lb", "ips");
    await network.loadBalancerBackendAddressPools.get(kinds.RG, "lb", "nics");
    const written = await network.loadBalancerBackendAddressPools.createOrUpdate(
      kinds.RG,
      "lb",
      "ips",
      {
        loadBalancerBackendAddresses: [
          ...(ips.loadBalancerBackendAddresses ?? []),
          { name: "ours", ipAddress: "10.0.1.40", virtualNetwork: { id: kinds.VNET }, adminState: "Down" },
        ],
      },
      ifMatch(ips.etag),
    );
    await network.loadBalancerBackendAddressPools.createOrUpdate(kinds.RG, "lb", "made", {}, poll);
    await network.loadBalancerBackendAddressPools.beginDeleteAndWait(kinds.RG, "lb", "made", poll);
    const again = await network.loadBalancers.get(kinds.RG, "lb");
    again.backendAddressPools?.push({ name: "withLb" });
    await network.loadBalancers.createOrUpdate(kinds.RG, "lb", again, ifMatch(again.etag));
    // A gateway, read and written whole.
    const agw = await network.applicationGateways.get(kinds.RG, "agw");
    agw.backendAddressPools?.[1]?.backendAddresses?.push({ fqdn: "spare.example.com" });
    await network.applicationGateways.beginCreateOrUpdateAndWait(kinds.RG, "agw", agw, ifMatch(agw.etag));
    // A Uniform instance's NICs through NRP's scale set NIC API (api-version 2018-10-01, as the SDK sends it).
    for await (const _ of network.networkInterfaces.listVirtualMachineScaleSetNetworkInterfaces(kinds.RG, "ss"));
    for await (const _ of network.networkInterfaces.listVirtualMachineScaleSetVMNetworkInterfaces(kinds.RG, "ss", "0"));
    await network.networkInterfaces.getVirtualMachineScaleSetNetworkInterface(kinds.RG, "ss", "0", "ss-nic");
    for await (const _ of network.networkInterfaces.listVirtualMachineScaleSetIpConfigurations(
      kinds.RG,
      "ss",
      "0",
      "ss-nic",
    ));
    await network.networkInterfaces.getVirtualMachineScaleSetIpConfiguration(kinds.RG, "ss", "0", "ss-nic", "ipc");
    // Errors: a stale If-Match (412), a pool that is not there (404), a body NRP refuses (400), a write meeting a
    // running one (409), a scale set NIC that is not there (404).
    const V = "?api-version=2026-01-01";
    await arm(s.url, "PUT", `${kinds.IP_POOL}${V}`, {
      body: { properties: { loadBalancerBackendAddresses: [] } },
      headers: { "if-match": lb.etag ?? "" },
    });
    await arm(s.url, "GET", `${kinds.LB}/backendAddressPools/nope${V}`);
    await arm(s.url, "PUT", `${kinds.IP_POOL}${V}`, {
      body: { properties: { loadBalancerBackendAddresses: [{ name: "x", properties: { ipAddress: "nope" } }] } },
    });
    expect(written.loadBalancerBackendAddresses?.map((a) => a.adminState)).toEqual([undefined, "Down", "Down"]);
    await arm(s.url, "GET", `${kinds.VMSS}/virtualMachines/9/networkInterfaces/ss-nic?api-version=2018-10-01`);
    // A delete's Location on NRP's operationResults.
    const del = await arm(s.url, "DELETE", `${kinds.LB}/backendAddressPools/withLb${V}`);
    expect(del.status).toBe(202);
    expect((await arm(s.url, "GET", del.headers.get("location") ?? "")).status).toBe(204);

    const record = s.control.specRecord()!;
    expect(record.violations).toEqual([]);
    expect(record.checked).toBeGreaterThan(20);
    // Only a delete's Location lies outside the definitions' paths (its URL is the answer's own).
    expect(record.uncovered).toEqual([
      "GET /subscriptions/{}/providers/Microsoft.Network/locations/{}/operationResults/{}",
    ]);
  });

  it("holds the new routes to the vendored definitions themselves, not to open ones: a mistyped pool or gateway body is recorded", async () => {
    sim = await startArmSimulator({ seed: kinds.WORLD, operationDurationMs: 0, specConformance: azureSpecs() });
    const s = sim;
    const V = "?api-version=2026-01-01";
    await arm(s.url, "PUT", `${kinds.EMPTY_POOL}${V}`, { body: { properties: { drainPeriodInSeconds: "soon" } } });
    const agw = (await arm(s.url, "GET", `${kinds.AGW}${V}`)).body;
    agw.properties.backendAddressPools[0].properties.backendAddresses = [{ ipAddress: 7 }];
    await arm(s.url, "PUT", `${kinds.AGW}${V}`, { body: agw });
    const record = s.control.specRecord()!;
    expect(
      record.violations
        .filter((v) => v.part === "request")
        .map((v) => [v.method, v.schema.split("#/definitions/")[1], v.errors.join()]),
    ).toEqual([
      ["PUT", "BackendAddressPool", expect.stringContaining("/properties/drainPeriodInSeconds must be integer")],
      [
        "PUT",
        "ApplicationGateway",
        expect.stringContaining(
          "/properties/backendAddressPools/0/properties/backendAddresses/0/ipAddress must be string",
        ),
      ],
    ]);
    const open = record.openDefinitions.map((d) => d.split("#/definitions/")[1]);
    for (const kept of [
      "LoadBalancer",
      "BackendAddressPool",
      "LoadBalancerBackendAddress",
      "InboundNatPool",
      "ApplicationGateway",
      "ApplicationGatewayBackendAddressPool",
      "ApplicationGatewayBackendAddress",
      "NetworkInterfaceIPConfigurationListResult",
    ])
      expect(open).not.toContain(kept);
  });

  it("holds a write meeting a running load balancer or gateway write to CloudError as NRP's 409 gives it", async () => {
    sim = await startArmSimulator({
      seed: kinds.WORLD,
      loadBalancerWriteMs: 60_000,
      appGatewayWriteMs: 60_000,
      specConformance: azureSpecs(),
    });
    const s = sim;
    const V = "?api-version=2026-01-01";
    const agw = (await arm(s.url, "GET", `${kinds.AGW}${V}`)).body;
    expect((await arm(s.url, "PUT", `${kinds.AGW}${V}`, { body: agw })).status).toBe(200);
    expect((await arm(s.url, "PUT", `${kinds.AGW}${V}`, { body: agw })).status).toBe(409);
    expect((await arm(s.url, "PUT", `${kinds.EMPTY_POOL}${V}`, { body: { properties: {} } })).status).toBe(200);
    expect((await arm(s.url, "DELETE", `${kinds.EMPTY_POOL}${V}`)).status).toBe(409);
    const record = s.control.specRecord()!;
    expect(record.violations).toEqual([]);
    expect(record.checked).toBe(5);
  });

  it("records a body or an answer that does not fit, and still answers as before", async () => {
    sim = await startArmSimulator({ seed: "demo", operationDurationMs: 0, specConformance: azureSpecs() });
    const s = sim;
    const read = await arm(s.url, "GET", NIC);
    // A NIC PUT whose enableIPForwarding is no boolean: the request is recorded.
    const bad = structuredClone(read.body);
    bad.properties.enableIPForwarding = "yes";
    await arm(s.url, "PUT", NIC, { body: bad });
    // An answer whose ipConfigurations is no array (a fault stands in for a simulator bug).
    s.control.injectFault({
      method: "GET",
      path: "networkInterfaces/etag-k8s-vm-0-nic$",
      status: 200,
      body: { id: NIC, name: "etag-k8s-vm-0-nic", location: "eastus2", properties: { ipConfigurations: "none" } },
    });
    expect((await arm(s.url, "GET", NIC)).status).toBe(200);
    // A scale set answer without the location every tracked resource has.
    s.control.injectFault({ method: "GET", path: "etag-k8s-mp-0$", status: 200, body: { name: "etag-k8s-mp-0" } });
    await arm(s.url, "GET", VMSS_PATH);
    const v = s.control.specRecord()!.violations;
    // The simulator stores what it was given (it does not check types, NRP would refuse the body): its answer to
    // that PUT is recorded too.
    expect(v.map((x) => [x.method, x.part, x.schema.split("#/definitions/")[1]])).toEqual([
      ["PUT", "request", "NetworkInterface"],
      ["PUT", "response 200", "NetworkInterface"],
      ["GET", "response 200", "NetworkInterface"],
      ["GET", "response 200", "VirtualMachineScaleSet"],
    ]);
    expect(v[0]?.errors.join()).toContain("/properties/enableIPForwarding must be boolean");
    expect(v[2]?.errors.join()).toContain("/properties/ipConfigurations must be array");
    expect(v[3]?.errors.join()).toContain("must have required property 'location'");
    // What the vendored subset leaves open is listed, not silently passed.
    expect(s.control.specRecord()!.openDefinitions).toEqual(
      expect.arrayContaining([expect.stringMatching(/ComputeRP\.json#\/definitions\/Sku$/)]),
    );
  });
});
