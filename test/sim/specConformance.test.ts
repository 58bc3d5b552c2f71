// The simulator's answers and the bodies it takes, held against Azure's OpenAPI definitions (the vendored subset in
// test/fixtures/azure/openapi): representative traffic, errors included, through plain HTTP and the real SDK clients,
// leaves no violation; and the check does catch what does not fit.
import { afterEach, describe, expect, it } from "vitest";
import { simComputeClient } from "../../sim/client";
import { startArmSimulator, type ArmSimulator } from "../../sim/index";
import { simNetworkClient } from "../../sim/networkClient";
import { azureSpecs } from "../support/azureSpecs";
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
