// Where the simulator is as strict as Azure, over plain HTTP: api-versions and ETags, events, CRP's throttle
// accounting, what can happen to an accepted write, and upgrade policies.
import { afterEach, describe, expect, it } from "vitest";
import { startArmSimulator, type ArmSimulator, type ArmSimulatorOptions } from "../../sim/index";
import { arm, nicsOf, POOL_ID, RG_PATH, SUB, VMSS_PATH, instanceChange } from "./testkit";

const AUTO_PATH = `${RG_PATH}/providers/Microsoft.Compute/virtualMachineScaleSets/etag-k8s-mp-auto`;

let sim: ArmSimulator | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

async function start(opts: ArmSimulatorOptions = {}): Promise<ArmSimulator> {
  sim = await startArmSimulator({ seed: "demo", ...opts });
  return sim;
}

const at = (s: ArmSimulator, path: string, version: string) =>
  `${s.url}${path}${path.includes("?") ? "&" : "?"}api-version=${version}`;

/** The model's first ip configuration, put in the demo pool: a model change. */
function withPool(ss: { properties: unknown }): unknown {
  const nics = nicsOf(ss);
  nics[0].properties.ipConfigurations[0].properties.loadBalancerBackendAddressPools = [{ id: POOL_ID }];
  return {
    location: "eastus2",
    properties: { virtualMachineProfile: { networkProfile: { networkInterfaceConfigurations: nics } } },
  };
}

function instancePools(s: ArmSimulator, scaleSet: string): number[] {
  return s.control
    .instances(scaleSet)
    .map((i) =>
      nicsOf({
        properties: {
          virtualMachineProfile: {
            networkProfile: (i["properties"] as { networkProfileConfiguration: unknown }).networkProfileConfiguration,
          },
        },
      }),
    )
    .map((nics) => (nics[0].properties.ipConfigurations[0].properties.loadBalancerBackendAddressPools ?? []).length);
}

describe("api-versions and ETags", () => {
  it("refuses an api-version Compute does not register with ARM's 400 InvalidApiVersionParameter", async () => {
    const s = await start();
    const r = await arm(s.url, "GET", at(s, VMSS_PATH, "banana"));
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("InvalidApiVersionParameter");
    expect(r.body.error.message).toMatch(
      /^The api-version 'banana' is invalid\. The supported versions are '2026-04-01,2026-03-01,.*2023-09-01,.*2015-06-15'\.$/,
    );
    expect((await arm(s.url, "PATCH", at(s, VMSS_PATH, "2023-09-02"), { body: { tags: { a: "1" } } })).status).toBe(
      400,
    );
    expect(s.control.resource(VMSS_PATH)?.["tags"]).toBeUndefined();
  });

  it("answers without ETags below 2023-09-01 and ignores If-Match there: a stale one writes anyway", async () => {
    const s = await start({ operationDurationMs: 0 });
    const old = await arm(s.url, "GET", at(s, VMSS_PATH, "2023-07-01"));
    expect(old.status).toBe(200);
    expect(old.headers.get("etag")).toBeNull();
    expect(old.body.etag).toBeUndefined();
    const list = await arm(s.url, "GET", at(s, `${VMSS_PATH}/virtualMachines`, "2023-07-01"));
    expect(list.body.value.map((v: { etag?: string }) => v.etag)).toEqual([undefined, undefined]);
    const vm = await arm(s.url, "GET", at(s, `${VMSS_PATH}/virtualMachines/0`, "2023-07-01"));
    expect([vm.headers.get("etag"), vm.body.etag]).toEqual([null, undefined]);
    const w = await arm(s.url, "PATCH", at(s, VMSS_PATH, "2023-07-01"), {
      headers: { "if-match": '"99"' },
      body: { tags: { a: "1" } },
    });
    expect(w.status).toBe(200);
    expect(w.headers.get("etag")).toBeNull();
    // From 2023-09-01 on: ETags in header and body, and If-Match is honoured.
    const now = await arm(s.url, "GET", at(s, VMSS_PATH, "2023-09-01"));
    expect([now.headers.get("etag"), now.body.etag]).toEqual(['"2"', '"2"']);
    expect(
      (
        await arm(s.url, "PATCH", at(s, VMSS_PATH, "2023-09-01"), {
          headers: { "if-match": '"99"' },
          body: { tags: { a: "2" } },
        })
      ).status,
    ).toBe(412);
  });

  it("refuses an empty If-Match with 400 instead of writing unconditionally", async () => {
    const s = await start();
    for (const value of ["", "  "]) {
      const r = await arm(s.url, "PATCH", VMSS_PATH, { headers: { "if-match": value }, body: { tags: { a: "1" } } });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("InvalidParameter");
      expect(r.body.error.message).toContain("If-Match");
    }
    expect(
      (
        await arm(s.url, "PUT", `${VMSS_PATH}/virtualMachines/0`, {
          headers: { "if-match": "" },
          body: { location: "eastus2" },
        })
      ).status,
    ).toBe(400);
    expect(s.control.resource(VMSS_PATH)?.["etag"]).toBe('"1"');
  });

  it("a stripEtag fault (set over /_sim/faults) answers without an ETag at any api-version", async () => {
    const s = await start();
    const set = await fetch(`${s.url}/_sim/faults`, {
      method: "POST",
      body: JSON.stringify({ method: "GET", path: "etag-k8s-mp-0(/virtualMachines)?$", stripEtag: true, times: 2 }),
    });
    expect(set.status).toBe(200);
    const ss = await arm(s.url, "GET", VMSS_PATH);
    expect([ss.status, ss.headers.get("etag"), ss.body.etag, ss.body.name]).toEqual([
      200,
      null,
      undefined,
      "etag-k8s-mp-0",
    ]);
    const list = await arm(s.url, "GET", `${VMSS_PATH}/virtualMachines`);
    expect(list.body.value.map((v: { etag?: string }) => v.etag)).toEqual([undefined, undefined]);
    expect((await arm(s.url, "GET", VMSS_PATH)).headers.get("etag")).toBe('"1"');
  });
});

describe("events", () => {
  it("publishes no event for CRP's internal ETag bump, which comes a seeded 1 to 5 simulated seconds after an instance write", async () => {
    const delays: number[] = [];
    for (const randomSeed of [7, 7, 8]) {
      const s = await start({ randomSeed, operationDurationMs: 0, timeScale: 0.0001 });
      await arm(s.url, "PUT", `${VMSS_PATH}/virtualMachines/0`, { body: instanceChange("1") });
      const t0 = s.control.clock.now();
      let waited = 0;
      while (s.control.resource(VMSS_PATH)?.["etag"] === '"1"') {
        s.control.clock.advance(100);
        waited = s.control.clock.now() - t0;
        expect(waited).toBeLessThanOrEqual(5200);
      }
      delays.push(waited);
      s.control.settle();
      expect(s.control.events().map((e) => e.data.operationName)).toEqual([
        "Microsoft.Compute/virtualMachineScaleSets/virtualMachines/write",
      ]);
      await s.stop();
    }
    for (const d of delays) expect(d).toBeGreaterThanOrEqual(1000);
    expect(Math.abs((delays[0] ?? 0) - (delays[1] ?? 0))).toBeLessThanOrEqual(1); // same seed, same delay (to the 100 ms step)
  });

  it("has Failure and Cancel types, no httpRequest on a create, and data.resourceGroup", async () => {
    const s = await start({ preemptRunningOperation: true, operationDurationMs: 1000 });
    await arm(s.url, "PUT", `${RG_PATH}/providers/Microsoft.Compute/virtualMachineScaleSets/fresh`, {
      body: { location: "eastus2", sku: { name: "Standard_D2s_v3", capacity: 0 }, properties: {} },
    });
    s.control.settle();
    await arm(s.url, "PATCH", VMSS_PATH, { body: { tags: { a: "1" } } });
    await arm(s.url, "PATCH", VMSS_PATH, { body: { tags: { a: "2" } } }); // preempts the first
    s.control.failNextOperation(VMSS_PATH);
    s.control.settle();
    await arm(s.url, "PATCH", VMSS_PATH, { body: { tags: { a: "3" } } });
    s.control.settle();
    const events = s.control.events();
    expect(events.map((e) => e.eventType)).toEqual([
      "Microsoft.Resources.ResourceWriteSuccess",
      "Microsoft.Resources.ResourceWriteCancel",
      "Microsoft.Resources.ResourceWriteSuccess",
      "Microsoft.Resources.ResourceWriteFailure",
    ]);
    expect(events[0]?.data.httpRequest).toBeUndefined();
    expect(events[1]?.data).toMatchObject({
      status: "Canceled",
      resourceGroup: "etag",
      httpRequest: { method: "PATCH" },
    });
    expect(events[3]?.data.status).toBe("Failed");
  });

  it("answers /_sim/events in CloudEvents 1.0 when set (or asked), else in the Event Grid schema", async () => {
    const s = await start({ eventSchema: "CloudEventSchemaV1_0", operationDurationMs: 0 });
    await arm(s.url, "PATCH", VMSS_PATH, { body: { tags: { a: "1" } } });
    s.control.settle();
    const cloud = (await (await fetch(`${s.url}/_sim/events`)).json()) as { value: Record<string, unknown>[] };
    expect(cloud.value[0]).toMatchObject({
      specversion: "1.0",
      type: "Microsoft.Resources.ResourceWriteSuccess",
      source: `/subscriptions/${SUB}`,
      subject: VMSS_PATH,
      datacontenttype: "application/json",
      data: { operationName: "Microsoft.Compute/virtualMachineScaleSets/write", resourceGroup: "etag" },
    });
    expect(cloud.value[0]?.["id"]).toBe(s.control.events()[0]?.id);
    const grid = (await (await fetch(`${s.url}/_sim/events?schema=EventGridSchema`)).json()) as {
      value: Record<string, unknown>[];
    };
    expect(grid.value[0]).toMatchObject({ eventType: "Microsoft.Resources.ResourceWriteSuccess", dataVersion: "2" });
  });
});

describe("throttling as CRP records it", () => {
  const remaining = (r: { headers: Headers }) =>
    Object.fromEntries(
      (r.headers.get("x-ms-ratelimit-remaining-resource") ?? "")
        .split(",")
        .map((p) => p.replace("Microsoft.Compute/", "").split(";") as [string, string]),
    );

  it("charges a VM LIST to the high-cost bucket a scale set LIST shares, plus one view per VM; polls, creates and deletes to their own", async () => {
    const s = await start({ operationDurationMs: 1000, rateLimitPolicyNames: "resourceSubscription" });
    const vms = await arm(s.url, "GET", `${VMSS_PATH}/virtualMachines`);
    expect(remaining(vms)).toEqual({
      HighCostGetVMScaleSet3Min: "1079",
      HighCostGetVMScaleSet30Min: "1799",
      VMScaleSetVMViews3Min: "5999",
    });
    const sets = await arm(s.url, "GET", `${RG_PATH}/providers/Microsoft.Compute/virtualMachineScaleSets`);
    expect(remaining(sets)).toEqual({ HighCostGetVMScaleSet3Min: "1078", HighCostGetVMScaleSet30Min: "1798" });
    expect(remaining(await arm(s.url, "GET", `${VMSS_PATH}/virtualMachines`))["VMScaleSetVMViews3Min"]).toBe("5997"); // 2 VMs before
    const create = await arm(s.url, "PUT", `${RG_PATH}/providers/Microsoft.Compute/virtualMachineScaleSets/fresh`, {
      body: { location: "eastus2", sku: { name: "Standard_D2s_v3", capacity: 0 }, properties: {} },
    });
    // A create has its own, smaller budget (125 a minute, 375 at once, per subscription), under the same name.
    expect(remaining(create)).toEqual({ CreateVMScaleSetSubscriptionMaximum: "374", CreateVMScaleSetResource: "11" });
    const poll = await arm(s.url, "GET", create.headers.get("azure-asyncoperation") ?? "");
    expect(remaining(poll)).toEqual({ GetOperationSubscriptionMaximum: "14999", GetOperationResource: "44" });
    s.control.settle();
    const del = await arm(s.url, "DELETE", `${RG_PATH}/providers/Microsoft.Compute/virtualMachineScaleSets/fresh`);
    expect(remaining(del)).toEqual({ DeleteVMScaleSetSubscriptionMaximum: "524", DeleteVMScaleSetResource: "11" });
    const vmDel = await arm(s.url, "DELETE", `${VMSS_PATH}/virtualMachines/1`);
    expect(remaining(vmDel)).toEqual({
      DeleteVMScaleSetVMSubscriptionMaximum: "1499",
      DeleteVMScaleSetVMResource: "11",
    });
    const vmGet = await arm(s.url, "GET", `${VMSS_PATH}/virtualMachines/0`);
    expect(remaining(vmGet)).toEqual({ GetVMScaleSetVMSubscriptionMaximum: "5999", GetVMScaleSetVMResource: "35" });
  });

  it("names CRP's buckets as the published samples do by default (<Policy>3Min, <Policy>30Min) at their sizes, beside each resource's own bucket and ARM's global counts", async () => {
    const s = await start({ operationDurationMs: 1000 });
    const get = await arm(s.url, "GET", VMSS_PATH);
    // The 2023 sample `GetVMScaleSet3Min;197,GetVMScaleSet30Min;1297` is three reads into these windows.
    expect(remaining(get)).toEqual({
      GetVMScaleSet3Min: "199",
      GetVMScaleSet30Min: "1299",
      GetVMScaleSetResource: "35",
    });
    expect(get.headers.get("x-ms-ratelimit-remaining-subscription-reads")).toBe("249");
    expect(get.headers.get("x-ms-ratelimit-remaining-subscription-global-reads")).toBe("3749"); // as recorded: 15 × 250, less this one
    const vm = await arm(s.url, "PUT", `${VMSS_PATH}/virtualMachines/0`, {
      body: { location: "eastus2", tags: { a: "1" } },
    });
    expect(vm.headers.get("x-ms-ratelimit-remaining-subscription-global-writes")).toBe("2999");
    // Charge 0 (tags on an instance change nothing): refunded, as CRP does.
    expect(remaining(vm)).toEqual({
      UpdateVMScaleSetVM3Min: "239",
      UpdateVMScaleSetVM30Min: "1199",
      UpdateVMScaleSetVMResource: "11",
    });
    // Even a no-op instance PUT runs an operation (recorded), and an instance delete meets it with 409 across the scale
    // set.
    s.control.settle();
    const del = await arm(s.url, "DELETE", `${VMSS_PATH}/virtualMachines/1`);
    expect(del.headers.get("x-ms-ratelimit-remaining-subscription-global-deletes")).toBe("2999");
    expect(remaining(del)).toEqual({
      DeleteVMScaleSetVM3Min: "239",
      DeleteVMScaleSetVM30Min: "1199",
      DeleteVMScaleSetVMResource: "11",
    });
    // Polls keep the names and the per-minute buckets of the recorded poll.
    const poll = await arm(s.url, "GET", del.headers.get("azure-asyncoperation") ?? "");
    expect(remaining(poll)).toEqual({ GetOperationSubscriptionMaximum: "14999", GetOperationResource: "44" });
    const list = await arm(s.url, "GET", `${VMSS_PATH}/virtualMachines`);
    expect(remaining(list)).toMatchObject({ HighCostGetVMScaleSet3Min: "179", HighCostGetVMScaleSet30Min: "1799" });
  });

  it("under the window names still keeps each resource's own bucket: the 13th quick write to one scale set is refused, naming it", async () => {
    const s = await start({ operationDurationMs: 0, throttling: true });
    for (let i = 1; i <= 12; i++)
      expect((await arm(s.url, "PATCH", VMSS_PATH, { body: { tags: { n: String(i) } } })).status).toBe(200);
    const refused = await arm(s.url, "PATCH", VMSS_PATH, { body: { tags: { n: "13" } } });
    expect(refused.status).toBe(429);
    expect(refused.body.details.map((d: { target: string }) => d.target)).toEqual(["CreateVMScaleSetResource"]);
    expect(remaining(refused)).toEqual({
      CreateVMScaleSet3Min: "228",
      CreateVMScaleSet30Min: "1188",
      CreateVMScaleSetResource: "0",
    });
  });
});

describe("what can happen to an accepted write", () => {
  it("preempts the running operation when set: the older ends Canceled with OperationPreempted", async () => {
    const s = await start({ preemptRunningOperation: true, operationDurationMs: 1000 });
    const first = await arm(s.url, "PATCH", VMSS_PATH, { body: { tags: { a: "1" } } });
    const second = await arm(s.url, "PATCH", VMSS_PATH, { body: { tags: { a: "2" } } });
    expect(second.status).toBe(200);
    const op = await arm(s.url, "GET", first.headers.get("azure-asyncoperation") ?? "");
    expect(op.body).toMatchObject({
      status: "Canceled",
      error: {
        code: "OperationPreempted",
        message: "Operation execution has been preempted by a more recent operation.",
      },
    });
    s.control.settle();
    expect((await arm(s.url, "GET", second.headers.get("azure-asyncoperation") ?? "")).body.status).toBe("Succeeded");
  });

  it("answers a failed operation's error status through its Location URL", async () => {
    const s = await start({ operationDurationMs: 1000 });
    s.control.failNextOperation(`${VMSS_PATH}/virtualMachines/1`);
    const del = await arm(s.url, "DELETE", `${VMSS_PATH}/virtualMachines/1`);
    const location = del.headers.get("location") ?? "";
    expect((await arm(s.url, "GET", location)).status).toBe(202);
    s.control.settle();
    const end = await arm(s.url, "GET", location);
    expect(end.status).toBe(500);
    expect(end.body.error.code).toBe("InternalExecutionError");
  });

  it("requires location on PUT, refuses a changed one, and refuses a non-numeric instance ID", async () => {
    const s = await start();
    const none = await arm(s.url, "PUT", VMSS_PATH, { body: { tags: { a: "1" } } });
    expect([none.status, none.body.error.code]).toEqual([400, "LocationRequired"]);
    const moved = await arm(s.url, "PATCH", VMSS_PATH, { body: { location: "westus", tags: { a: "1" } } });
    expect([moved.status, moved.body.error.code]).toEqual([400, "InvalidResourceLocation"]);
    expect((await arm(s.url, "PUT", VMSS_PATH, { body: { location: "East US 2", tags: { a: "1" } } })).status).toBe(
      200,
    );
    s.control.settle(); // the scale set write's operation would refuse an instance write (conflictAcrossScaleSet)
    // An instance PUT without location is taken (recorded), and its tags dropped: nothing changed, charge 0.
    const vmNone = await arm(s.url, "PUT", `${VMSS_PATH}/virtualMachines/0`, { body: { tags: { a: "1" } } });
    expect([vmNone.status, vmNone.headers.get("etag"), vmNone.headers.get("x-ms-request-charge")]).toEqual([
      200,
      '"1"',
      "0",
    ]);
    expect(vmNone.body.tags).toBeUndefined();
    expect(vmNone.body.properties.provisioningState).toBe("Updating");
    for (const bad of ["abc", "1a", "-1"]) {
      const r = await arm(s.url, "GET", `${VMSS_PATH}/virtualMachines/${bad}`);
      expect(r.status).toBe(400);
      expect(r.body.error).toEqual({
        code: "InvalidParameter",
        message: "Virtual Machine Scale Set VM instanceId must be a number.",
        target: "instanceId",
      });
    }
  });
});

describe("upgradePolicy", () => {
  it("Automatic: CRP applies a model change to every instance shortly after, moving their ETags, with no instance event", async () => {
    const s = await start({ upgradeStepMs: 2000, operationDurationMs: 0 });
    const ss = (await arm(s.url, "GET", AUTO_PATH)).body;
    expect(ss.properties.upgradePolicy).toEqual({ mode: "Automatic" });
    expect((await arm(s.url, "PUT", AUTO_PATH, { headers: { "if-match": ss.etag }, body: withPool(ss) })).status).toBe(
      200,
    );
    s.control.clock.advance(1000);
    expect(instancePools(s, AUTO_PATH)).toEqual([0, 0]);
    s.control.clock.advance(1000);
    expect(instancePools(s, AUTO_PATH)).toEqual([1, 1]);
    expect(
      s.control
        .instances(AUTO_PATH)
        .map((i) => [i["etag"], (i["properties"] as { latestModelApplied: boolean }).latestModelApplied]),
    ).toEqual([
      ['"2"', true],
      ['"2"', true],
    ]);
    expect(s.control.poolMembers(POOL_ID)).toHaveLength(2);
    s.control.settle();
    expect(s.control.events().map((e) => e.data.operationName)).toEqual([
      "Microsoft.Compute/virtualMachineScaleSets/write",
    ]);
    // Manual (etag-k8s-mp-0): nothing happens to its instances.
    const manual = (await arm(s.url, "GET", VMSS_PATH)).body;
    await arm(s.url, "PUT", VMSS_PATH, { body: withPool(manual) });
    s.control.settle();
    expect(instancePools(s, VMSS_PATH)).toEqual([0, 0]);
  });

  it("Rolling: batches of maxBatchInstancePercent; an instance PUT during the rolling upgrade answers 409", async () => {
    const s = await start({ upgradeStepMs: 2000, operationDurationMs: 0 });
    s.control.write(AUTO_PATH, (r) => {
      (r["properties"] as Record<string, unknown>)["upgradePolicy"] = {
        mode: "Rolling",
        rollingUpgradePolicy: { maxBatchInstancePercent: 50 },
      };
      r["sku"] = { ...(r["sku"] as object), capacity: 4 };
    });
    s.control.settle();
    const ss = (await arm(s.url, "GET", AUTO_PATH)).body;
    expect((await arm(s.url, "PUT", AUTO_PATH, { body: withPool(ss) })).status).toBe(200);
    s.control.clock.advance(2000);
    expect(instancePools(s, AUTO_PATH)).toEqual([1, 1, 0, 0]);
    const refused = await arm(s.url, "PUT", `${AUTO_PATH}/virtualMachines/3`, { body: instanceChange("1") });
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toContain("rolling upgrade");
    s.control.clock.advance(2000);
    expect(instancePools(s, AUTO_PATH)).toEqual([1, 1, 1, 1]);
    expect((await arm(s.url, "PUT", `${AUTO_PATH}/virtualMachines/3`, { body: instanceChange("1") })).status).toBe(200);
  });
});
