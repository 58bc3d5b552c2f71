// The simulator over plain HTTP, as curl or cloud-provider-azure would see it.
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { startArmSimulator, type ArmSimulator } from "../../sim/index";
import { arm, ipConfig, LB_PATH, nicsOf, POOL_ID, RG_PATH, SUB, SUBNET_ID, VMSS_PATH, instanceChange } from "./testkit";

let sim: ArmSimulator;
beforeEach(async () => {
  await sim?.stop();
  sim = await startArmSimulator({ seed: "demo", operationDurationMs: 1000 });
});
afterAll(() => sim.stop());

describe("front door", () => {
  it("answers 401 without a bearer token", async () => {
    const r = await arm(sim.url, "GET", VMSS_PATH, { token: null });
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe("AuthenticationFailed");
  });

  it("answers 400 MissingApiVersionParameter without api-version", async () => {
    const r = await arm(sim.url, "GET", `${sim.url}${VMSS_PATH}`);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("MissingApiVersionParameter");
  });

  it("matches paths case-insensitively and answers IDs in the casing they were created with", async () => {
    const r = await arm(sim.url, "GET", VMSS_PATH.toUpperCase().replace("/SUBSCRIPTIONS/", "/subscriptions/"));
    expect(r.status).toBe(200);
    expect(r.body.id).toBe(VMSS_PATH);
    expect(r.body.name).toBe("etag-k8s-mp-0");
  });

  it("answers ARM's 404 shapes", async () => {
    expect(
      (
        await arm(
          sim.url,
          "GET",
          `/subscriptions/${SUB}/resourceGroups/nope/providers/Microsoft.Compute/virtualMachineScaleSets/x`,
        )
      ).body.error.code,
    ).toBe("ResourceGroupNotFound");
    const r = await arm(sim.url, "GET", `${RG_PATH}/providers/Microsoft.Compute/virtualMachineScaleSets/nope`);
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe("ResourceNotFound");
  });
});

describe("scale set wire format", () => {
  it("serves the demo scale set in ARM JSON with a quoted integer ETag in header and body", async () => {
    const r = await arm(sim.url, "GET", VMSS_PATH);
    expect(r.headers.get("etag")).toBe('"1"');
    expect(r.body).toMatchObject({
      type: "Microsoft.Compute/virtualMachineScaleSets",
      location: "eastus2",
      etag: '"1"',
      sku: { capacity: 2 },
      properties: { provisioningState: "Succeeded", upgradePolicy: { mode: "Manual" } },
    });
    expect(nicsOf(r.body)).toEqual([
      {
        name: "etag-k8s-mp-0-nic-0",
        properties: {
          primary: true,
          enableAcceleratedNetworking: true,
          enableIPForwarding: true,
          ipConfigurations: [
            {
              name: "ipConfig0",
              properties: { primary: true, privateIPAddressVersion: "IPv4", subnet: { id: SUBNET_ID } },
            },
          ],
        },
      },
    ]);
  });

  it("serves instances with their own ETag and network profile configuration", async () => {
    const r = await arm(sim.url, "GET", `${VMSS_PATH}/virtualMachines/1`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      id: `${VMSS_PATH}/virtualMachines/1`,
      name: "etag-k8s-mp-0_1",
      instanceId: "1",
      etag: '"1"',
      properties: { latestModelApplied: true, provisioningState: "Succeeded" },
    });
    expect(r.body.properties.networkProfileConfiguration.networkInterfaceConfigurations[0].name).toBe(
      "etag-k8s-mp-0-nic-0",
    );
  });
});

describe("writes", () => {
  it("keeps everything a sparse PUT (location + network profile, as cloud-provider-azure sends) leaves out", async () => {
    const before = (await arm(sim.url, "GET", VMSS_PATH)).body;
    const nics = nicsOf(before);
    nics[0].properties.ipConfigurations[0].properties.loadBalancerBackendAddressPools = [{ id: POOL_ID }];
    const r = await arm(sim.url, "PUT", VMSS_PATH, {
      headers: { "if-match": before.etag },
      body: {
        location: "eastus2",
        properties: { virtualMachineProfile: { networkProfile: { networkInterfaceConfigurations: nics } } },
      },
    });
    expect(r.status).toBe(200);
    expect(r.headers.get("etag")).toBe('"2"');
    const after = (await arm(sim.url, "GET", VMSS_PATH)).body;
    expect(nicsOf(after)).toEqual(nics);
    // Everything else is as it was: sku and capacity, osProfile, storageProfile, upgradePolicy.
    const strip = (x: typeof before) => ({
      ...x,
      etag: undefined,
      properties: {
        ...x.properties,
        provisioningState: undefined,
        virtualMachineProfile: { ...x.properties.virtualMachineProfile, networkProfile: undefined },
      },
    });
    expect(strip(after)).toEqual(strip(before));
  });

  it("replaces a sent array whole: the other writer's ip configuration is gone without If-Match", async () => {
    const base = (await arm(sim.url, "GET", VMSS_PATH)).body;
    sim.control.write(VMSS_PATH, (r) => nicsOf(r)[0].properties.ipConfigurations.push(ipConfig("other")));
    sim.control.settle(); // the other write has finished: ours meets no operation in progress
    const nics = nicsOf(base);
    nics[0].properties.ipConfigurations.push(ipConfig("mine"));
    await arm(sim.url, "PUT", VMSS_PATH, {
      body: {
        location: "eastus2",
        properties: { virtualMachineProfile: { networkProfile: { networkInterfaceConfigurations: nics } } },
      },
    });
    const names = nicsOf(sim.control.resource(VMSS_PATH))[0].properties.ipConfigurations.map(
      (c: { name: string }) => c.name,
    );
    expect(names).toEqual(["ipConfig0", "mine"]);
  });

  it("answers 412 with CRP's exact body on a stale If-Match", async () => {
    sim.control.write(VMSS_PATH, (r) => {
      r["tags"] = { by: "other" };
    });
    sim.control.settle(); // the second write meets the first's operation otherwise (409)
    sim.control.write(VMSS_PATH, (r) => {
      r["tags"] = { by: "other-again" };
    });
    const r = await arm(sim.url, "PATCH", VMSS_PATH, { headers: { "if-match": '"2"' }, body: { tags: { a: "b" } } });
    expect(r.status).toBe(412);
    expect(r.text).toBe(
      '{"error":{"code":"PreconditionFailed","message":"Etag provided in if-match header \\"2\\" does not match etag \\"3\\" of resource."}}',
    );
    expect(sim.control.stats(VMSS_PATH).status412).toBe(1);
  });

  it("keeps the ETag on a write that changes nothing and charges it 0", async () => {
    const r = await arm(sim.url, "PATCH", VMSS_PATH, {
      headers: { "if-match": "*" },
      body: { properties: { upgradePolicy: { mode: "Manual" } } },
    });
    expect(r.status).toBe(200);
    expect(r.headers.get("etag")).toBe('"1"');
    expect(r.headers.get("x-ms-request-charge")).toBe("0");
  });

  it("ignores read-only properties in a body", async () => {
    const r = await arm(sim.url, "PATCH", VMSS_PATH, {
      body: { id: "/x", etag: '"99"', properties: { provisioningState: "Failed", uniqueId: "u" }, tags: { t: "1" } },
    });
    expect(r.body).toMatchObject({
      id: VMSS_PATH,
      etag: '"2"',
      properties: { provisioningState: "Updating" },
      tags: { t: "1" },
    });
    expect(r.body.properties.uniqueId).not.toBe("u");
  });

  it("If-None-Match: * creates but never overwrites", async () => {
    const body = { location: "eastus2", sku: { name: "Standard_D2s_v3", capacity: 0 }, properties: {} };
    const created = await arm(sim.url, "PUT", `${RG_PATH}/providers/Microsoft.Compute/virtualMachineScaleSets/NewOne`, {
      headers: { "if-none-match": "*" },
      body,
    });
    expect(created.status).toBe(201);
    expect(created.body.etag).toBe('"1"');
    expect(created.body.id).toBe(`${RG_PATH}/providers/Microsoft.Compute/virtualMachineScaleSets/NewOne`);
    const again = await arm(sim.url, "PUT", `${RG_PATH}/providers/Microsoft.Compute/virtualMachineScaleSets/newone`, {
      headers: { "if-none-match": "*" },
      body,
    });
    expect(again.status).toBe(412);
  });

  it("accepts a trailing comma before ] or } and rejects bad JSON with 400", async () => {
    const ok = await arm(sim.url, "PATCH", VMSS_PATH, {
      rawBody: '{"tags": {"a": "b",}, "properties": {"upgradePolicy": {"mode": "Manual",},},}',
    });
    expect(ok.status).toBe(200);
    expect(ok.body.tags).toEqual({ a: "b" });
    const bad = await arm(sim.url, "PATCH", VMSS_PATH, { rawBody: '{"tags": ' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("InvalidRequestContent");
  });

  it("rejects a reference to a backend pool it does not know with 400, and changes nothing", async () => {
    const vm = (await arm(sim.url, "GET", `${VMSS_PATH}/virtualMachines/0`)).body;
    const nics = vm.properties.networkProfileConfiguration.networkInterfaceConfigurations;
    nics[0].properties.ipConfigurations[0].properties.loadBalancerBackendAddressPools = [
      { id: `${LB_PATH}/backendAddressPools/nope` },
    ];
    const r = await arm(sim.url, "PUT", `${VMSS_PATH}/virtualMachines/0`, {
      body: {
        location: "eastus2",
        properties: { networkProfileConfiguration: { networkInterfaceConfigurations: nics } },
      },
    });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("InvalidResourceReference");
    expect((await arm(sim.url, "GET", `${VMSS_PATH}/virtualMachines/0`)).body.etag).toBe('"1"');
  });
});

describe("long-running operations", () => {
  it("answers a write with Azure-AsyncOperation and Retry-After; Updating until the duration passes", async () => {
    const r = await arm(sim.url, "PATCH", VMSS_PATH, { body: { tags: { a: "1" } } });
    expect(r.status).toBe(200);
    expect(r.headers.get("location")).toBeNull();
    expect(r.headers.get("retry-after")).toBe("0");
    const op = r.headers.get("azure-asyncoperation") ?? "";
    expect(op).toMatch(
      new RegExp(
        `^${sim.url}/subscriptions/${SUB}/providers/Microsoft.Compute/locations/eastus2/operations/[0-9a-f-]+\\?`,
      ),
    );
    expect(r.body.properties.provisioningState).toBe("Updating");
    expect((await arm(sim.url, "GET", op)).body.status).toBe("InProgress");
    expect((await arm(sim.url, "GET", VMSS_PATH)).body.properties.provisioningState).toBe("Updating");
    sim.control.clock.advance(1000);
    const done = await arm(sim.url, "GET", op);
    expect(done.body).toMatchObject({ status: "Succeeded", name: expect.any(String), endTime: expect.any(String) });
    expect((await arm(sim.url, "GET", VMSS_PATH)).body.properties.provisioningState).toBe("Succeeded");
  });

  it("ends an operation Failed when told", async () => {
    const r = await arm(sim.url, "PATCH", VMSS_PATH, { body: { tags: { a: "1" } } });
    expect(sim.control.failOperation(VMSS_PATH)).toBe(true);
    sim.control.settle();
    const op = await arm(sim.url, "GET", r.headers.get("azure-asyncoperation") ?? "");
    expect(op.body.status).toBe("Failed");
    expect(op.body.error.code).toBe("InternalExecutionError");
    expect((await arm(sim.url, "GET", VMSS_PATH)).body.properties.provisioningState).toBe("Failed");
  });

  it("deletes with 202, Azure-AsyncOperation and Location, Deleting until done, then 404", async () => {
    const r = await arm(sim.url, "DELETE", VMSS_PATH);
    expect(r.status).toBe(202);
    expect(r.headers.get("azure-asyncoperation")).toBeTruthy();
    expect(r.headers.get("location")).toContain("monitor=true");
    expect((await arm(sim.url, "GET", VMSS_PATH)).body.properties.provisioningState).toBe("Deleting");
    expect((await arm(sim.url, "GET", r.headers.get("location") ?? "")).status).toBe(202);
    sim.control.clock.advance(1000);
    expect((await arm(sim.url, "GET", VMSS_PATH)).status).toBe(404);
    expect(sim.control.events().map((e) => e.eventType)).toContain("Microsoft.Resources.ResourceDeleteSuccess");
  });

  it("answers 409 with CRP's current concurrent-request message (suffix included) while an operation runs on the resource", async () => {
    expect((await arm(sim.url, "PATCH", VMSS_PATH, { body: { tags: { a: "1" } } })).status).toBe(200);
    const r = await arm(sim.url, "PATCH", VMSS_PATH, { body: { tags: { a: "2" } } });
    expect(r.status).toBe(409);
    expect(r.body.error).toEqual({
      code: "Conflict",
      message:
        "The request failed due to conflict with a concurrent request. To resolve it, please refer to https://aka.ms/activitylog to get more details on the conflicting requests.",
    });
    // An instance write meets the scale set's operation too (conflictAcrossScaleSet, the default).
    expect((await arm(sim.url, "PUT", `${VMSS_PATH}/virtualMachines/0`, { body: instanceChange("1") })).status).toBe(
      409,
    );
    sim.control.clock.advance(1000);
    expect((await arm(sim.url, "PATCH", VMSS_PATH, { body: { tags: { a: "2" } } })).status).toBe(200);
    expect(sim.control.stats(VMSS_PATH).status409).toBe(2);
  });
});

describe("load balancer", () => {
  it("derives each pool's backendIPConfigurations from the instances that reference it", async () => {
    const empty = await arm(sim.url, "GET", LB_PATH);
    // As NRP answers an empty pool: no backendIPConfigurations key at all, and a pool made with its load balancer (not
    // through the pool API) lists no loadBalancerBackendAddresses either.
    expect(empty.body.properties.backendAddressPools[0]).toMatchObject({ id: POOL_ID, name: "etag-k8s" });
    expect(empty.body.properties.backendAddressPools[0].properties).not.toHaveProperty("backendIPConfigurations");
    expect(empty.body.properties.backendAddressPools[0].properties).not.toHaveProperty("loadBalancerBackendAddresses");
    // The model alone does not put anyone in the pool: instances do.
    sim.control.write(VMSS_PATH, (r) => {
      nicsOf(r)[0].properties.ipConfigurations[0].properties.loadBalancerBackendAddressPools = [{ id: POOL_ID }];
    });
    expect(
      (await arm(sim.url, "GET", LB_PATH)).body.properties.backendAddressPools[0].properties.backendIPConfigurations,
    ).toBeUndefined();
    const vm = (await arm(sim.url, "GET", `${VMSS_PATH}/virtualMachines/1`)).body;
    vm.properties.networkProfileConfiguration.networkInterfaceConfigurations[0].properties.ipConfigurations[0].properties.loadBalancerBackendAddressPools =
      [{ id: POOL_ID.toLowerCase() }];
    sim.control.settle();
    expect((await arm(sim.url, "PUT", `${VMSS_PATH}/virtualMachines/1`, { body: vm })).status).toBe(200);
    // NRP shows the membership once the instance's operation has ended, not when the PUT was taken.
    expect((await arm(sim.url, "GET", POOL_ID)).body.properties.backendIPConfigurations).toBeUndefined();
    sim.control.settle();
    const lb = await arm(sim.url, "GET", LB_PATH);
    expect(lb.body.properties.backendAddressPools[0].properties.backendIPConfigurations).toEqual([
      { id: `${VMSS_PATH}/virtualMachines/1/networkInterfaces/etag-k8s-mp-0-nic-0/ipConfigurations/ipConfig0` },
    ]);
  });
});
