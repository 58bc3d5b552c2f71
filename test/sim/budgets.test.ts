// Azure's budgets at their published size, beyond the scale set's own: a VM's GET (15 a minute, 45 at once, per VM),
// VM LIST on the high-cost bucket, which budget a request spends, and ARM refusing an api-version the resource type
// does not register on every route. Network RP's 5-minute budget, spent to its 1,000th write, is in
// test/sim/publishedBuckets.test.ts.
import { afterEach, describe, expect, it } from "vitest";
import { startArmSimulator, type ArmSimulator, type ArmSimulatorOptions } from "../../sim/index";
import { createCore } from "../../sim/core";
import { registrationOf, networkBudgetOf } from "../../sim/http/registration";
import { resolveSettings } from "../../sim/options";
import { applySeed, DEMO_SEED } from "../../sim/seed";
import { arm, RG_PATH, SUB } from "./testkit";

let sim: ArmSimulator | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});
async function start(opts: ArmSimulatorOptions = {}): Promise<ArmSimulator> {
  sim = await startArmSimulator({ seed: "demo", operationDurationMs: 0, ...opts });
  return sim;
}

const VM = `${RG_PATH}/providers/Microsoft.Compute/virtualMachines/etag-k8s-vm-0`;
const NIC = `${RG_PATH}/providers/Microsoft.Network/networkInterfaces/etag-k8s-vm-0-nic`;
const remaining = (r: { headers: Headers }) =>
  Object.fromEntries(
    (r.headers.get("x-ms-ratelimit-remaining-resource") ?? "")
      .split(",")
      .filter(Boolean)
      .map((p) => p.replace("Microsoft.Compute/", "").split(";") as [string, string]),
  );

describe("Compute budgets of top-level VMs", () => {
  it("charges a VM GET to the VM's own bucket (45 at once) and the subscription's, and refuses the 46th quick one", async () => {
    // Simulated time nearly stands still: nothing refills while the bucket is emptied.
    const s = await start({ throttling: { timeScale: 0.0001, arm: false } });
    const first = await arm(s.url, "GET", VM);
    expect(first.status).toBe(200);
    expect(remaining(first)).toEqual({ GetVMSubscriptionMaximum: "14999", GetVMResource: "44" });
    for (let i = 2; i <= 45; i++) expect((await arm(s.url, "GET", VM)).status).toBe(200);
    const refused = await arm(s.url, "GET", VM);
    expect(refused.status).toBe(429);
    expect(refused.body.details.map((d: { target: string }) => d.target)).toEqual(["GetVMResource"]);
    expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    // Another VM has a bucket of its own.
    const other = s.control.virtualMachines(
      `${RG_PATH}/providers/Microsoft.Compute/virtualMachineScaleSets/etag-k8s-flex-0`,
    );
    expect((await arm(s.url, "GET", String(other[0]?.["id"]))).status).toBe(200);
  });

  it("charges a VM LIST to the high-cost bucket the scale set LIST spends", async () => {
    const s = await start();
    const vms = await arm(s.url, "GET", `${RG_PATH}/providers/Microsoft.Compute/virtualMachines`);
    expect(remaining(vms)).toEqual({ HighCostGetVMScaleSet3Min: "179", HighCostGetVMScaleSet30Min: "1799" });
    const sets = await arm(s.url, "GET", `${RG_PATH}/providers/Microsoft.Compute/virtualMachineScaleSets`);
    expect(remaining(sets)).toEqual({ HighCostGetVMScaleSet3Min: "178", HighCostGetVMScaleSet30Min: "1798" });
    const all = await arm(s.url, "GET", `/subscriptions/${SUB}/providers/Microsoft.Compute/virtualMachines`);
    expect(all.status).toBe(200);
    expect(remaining(all)).toHaveProperty("HighCostGetVMScaleSet30Min");
  });
});

describe("api-versions ARM refuses", () => {
  it("answers a date a type does not register with NoRegisteredProviderFound, on Compute and Network routes alike", async () => {
    const s = await start();
    const cases: [string, string, string][] = [
      [VM, "2026-01-01", "virtualMachines"],
      [NIC, "2026-03-01", "networkInterfaces"],
      [`${RG_PATH}/providers/Microsoft.Network/loadBalancers/etag-k8s`, "2099-01-01", "loadBalancers"],
      [
        `${RG_PATH}/providers/Microsoft.Network/loadBalancers/etag-k8s/backendAddressPools/etag-k8s`,
        "2099-01-01",
        "loadBalancers/backendAddressPools",
      ],
      [
        `${RG_PATH}/providers/Microsoft.Compute/virtualMachineScaleSets/etag-k8s-mp-0/virtualMachines/0`,
        "2099-01-01",
        "virtualMachineScaleSets/virtualMachines",
      ],
    ];
    for (const [path, version, type] of cases) {
      const r = await arm(s.url, "GET", `${s.url}${path}?api-version=${version}`);
      expect(r.status, path).toBe(400);
      expect(r.body.error.code).toBe("NoRegisteredProviderFound");
      expect(r.body.error.message).toMatch(
        new RegExp(
          `^No registered resource provider found for location 'eastus2' and API version '${version}' for type '${type.replace("/", "\\/")}'\\. The supported api-versions are '2015-06-15, .*'\\. The supported locations are 'eastus2'\\.$`,
        ),
      );
    }
    // Not a date at all: ARM's InvalidApiVersionParameter, on Network routes too.
    const banana = await arm(s.url, "GET", `${s.url}${NIC}?api-version=banana`);
    expect([banana.status, banana.body.error.code]).toEqual([400, "InvalidApiVersionParameter"]);
    // Each provider's own versions pass.
    expect((await arm(s.url, "GET", `${s.url}${NIC}?api-version=2025-05-01`)).status).toBe(200);
    expect((await arm(s.url, "GET", `${s.url}${VM}?api-version=2025-04-01`)).status).toBe(200);
  });

  it("checks the routes of load balancers, pools, gateways and NRP's operation results before any provider sees them", async () => {
    const s = await start();
    const lb = `${RG_PATH}/providers/Microsoft.Network/loadBalancers/etag-k8s`;
    const cases: [string, string, string][] = [
      ["GET", `${RG_PATH}/providers/Microsoft.Network/applicationGateways/none`, "applicationGateways"],
      ["PUT", `${RG_PATH}/providers/Microsoft.Network/applicationGateways/new`, "applicationGateways"],
      ["PUT", lb, "loadBalancers"],
      ["PUT", `${lb}/backendAddressPools/new`, "loadBalancers/backendAddressPools"],
      ["DELETE", `${lb}/backendAddressPools/etag-k8s`, "loadBalancers/backendAddressPools"],
      ["GET", `${lb}/backendAddressPools`, "loadBalancers/backendAddressPools"],
      [
        "GET",
        `/subscriptions/${SUB}/providers/Microsoft.Network/locations/eastus2/operationResults/x`,
        "locations/operationResults",
      ],
    ];
    const before = s.control.resource(lb)?.["etag"];
    for (const [method, path, type] of cases) {
      // A Compute date: registered for no Network type.
      const r = await arm(s.url, method, `${s.url}${path}?api-version=2026-03-01`, {
        ...(method === "PUT" ? { body: { location: "eastus2", properties: {} } } : {}),
      });
      expect([r.status, r.body.error.code], `${method} ${path}`).toEqual([400, "NoRegisteredProviderFound"]);
      expect(r.body.error.message).toContain(`for type '${type}'. The supported api-versions are '2015-06-15, `);
    }
    // Nothing was written, and nothing was created.
    expect(s.control.resource(lb)?.["etag"]).toBe(before);
    expect(s.control.poolState(`${lb}/backendAddressPools/etag-k8s`)).toBeDefined();
    expect(s.control.resource(`${RG_PATH}/providers/Microsoft.Network/applicationGateways/new`)).toBeUndefined();
  });

  it("registers a scale set's NICs (under Microsoft.Compute, answered by NRP) at their own versions: 2018-10-01 as the SDKs send it, not Compute's newest nor Network's", async () => {
    const s = await start();
    const nics = `${RG_PATH}/providers/Microsoft.Compute/virtualMachineScaleSets/etag-k8s-mp-0/virtualMachines/0/networkInterfaces`;
    expect((await arm(s.url, "GET", `${s.url}${nics}?api-version=2018-10-01`)).status).toBe(200);
    for (const version of ["2026-03-01", "2026-01-01"]) {
      const r = await arm(s.url, "GET", `${s.url}${nics}?api-version=${version}`);
      expect([r.status, r.body.error.code]).toEqual([400, "NoRegisteredProviderFound"]);
      // The list ARM answered for the type (Azure/azure-sdk-for-python issue 32029).
      expect(r.body.error.message).toMatch(
        /for type 'virtualMachineScaleSets\/virtualMachines\/networkInterfaces'\. The supported api-versions are '2015-05-01-preview, 2015-06-15, .*, 2018-10-01, .*, 2023-07-01'\./,
      );
    }
    const all = await arm(
      s.url,
      "GET",
      `${s.url}${RG_PATH}/providers/Microsoft.Compute/virtualMachineScaleSets/etag-k8s-mp-0/networkInterfaces?api-version=2026-03-01`,
    );
    expect(all.body.error.message).toContain("for type 'virtualMachineScaleSets/networkInterfaces'");
  });
});

describe("who answers a request, and whose budget it spends", () => {
  it("counts a scale set NIC read against NRP's read budget and a scale set read against none of NRP's", () => {
    const core = createCore(resolveSettings());
    applySeed(DEMO_SEED, core.engine);
    const reg = (path: string) => registrationOf(core.engine, path);
    const nic = reg(
      `${RG_PATH}/providers/Microsoft.Compute/virtualMachineScaleSets/ss/virtualMachines/0/networkInterfaces/n`,
    );
    expect(nic && networkBudgetOf(nic, "GET")).toEqual({
      kind: "reads",
      regionKey: `${SUB}|eastus2`,
      operation: "GetNetworkInterfaceOperation",
    });
    const ss = reg(`${RG_PATH}/providers/Microsoft.Compute/virtualMachineScaleSets/ss`);
    expect(ss && networkBudgetOf(ss, "GET")).toBeUndefined();
    const pool = reg(`${RG_PATH}/providers/Microsoft.Network/loadBalancers/lb/backendAddressPools/p`);
    expect(pool && networkBudgetOf(pool, "PUT")).toMatchObject({
      kind: "writes",
      operation: "PutBackendAddressPoolOperation",
    });
    core.clock.stop();
  });
});

describe("how much of each window a workload left", () => {
  it("keeps the fewest tokens each subscription window held after an admitted request, not the per-resource buckets", async () => {
    const s = await start({ throttling: { timeScale: 0.0001, arm: false } });
    const VMSS = `${RG_PATH}/providers/Microsoft.Compute/virtualMachineScaleSets/etag-k8s-mp-0`;
    for (let i = 0; i < 3; i++) expect((await arm(s.url, "GET", VMSS)).status).toBe(200);
    await arm(s.url, "GET", `${RG_PATH}/providers/Microsoft.Compute/virtualMachineScaleSets`);
    expect(s.control.bucketLows()).toEqual({
      GetVMScaleSet3Min: { allowed: 200, lowest: 197 },
      GetVMScaleSet30Min: { allowed: 1300, lowest: 1297 },
      HighCostGetVMScaleSet3Min: { allowed: 180, lowest: 179 },
      HighCostGetVMScaleSet30Min: { allowed: 1800, lowest: 1799 },
    });
    s.control.resetStats();
    expect(s.control.bucketLows()).toEqual({});
  });
});
