import { execFile } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SeedSpec } from "../../sim";
import { MAX_DECLARATIONS_PER_CALLER } from "../../src/core/declarationCap";
import { mapLimit } from "../../src/core/retryPolicy";
import { DEMO } from "../support/harness";
import { APP_DIR, json, startIntakeApp, type IntakeApp } from "./support";

/**
 * GET /api/plan and PUT ?dryRun=true over the real HTTP edge (the built functions in the local runtime, Azurite, the
 * TLS simulator), held to what a reconcile holds to: nothing read outside POOLSYNC_SCOPES, ARM's trouble answered as
 * ARM's (502/503 with ARM's code, never the host's 500), the declaration cap as a real declaration meets it, and a
 * bounded number of ARM reads, saying what the bound left out. The queue trigger stays off: nothing is ever applied.
 */

const SUB = DEMO.subscription;
const RG = `/subscriptions/${SUB}/resourceGroups/plan/providers`;
const UNI = `${RG}/Microsoft.Compute/virtualMachineScaleSets/uni`;
const FLEX = `${RG}/Microsoft.Compute/virtualMachineScaleSets/flex`;
const VM_IN = `${RG}/Microsoft.Compute/virtualMachines/vm-in`;
const VM_OUT = `${RG}/Microsoft.Compute/virtualMachines/vm-out`;
/** vm-out's NIC lives in a resource group poolsync may not touch. */
const PROD_NIC = `/subscriptions/${SUB}/resourceGroups/prod/providers/Microsoft.Network/networkInterfaces/vm-out-nic`;
const POOL = `${RG}/Microsoft.Network/loadBalancers/lb/backendAddressPools/pool`;
const FLEX_VMS = 6;
const MAX_READS = 6;

const ipc = (name: string) => ({ name, subnet: "vnet/subnet" });
const WORLD: SeedSpec = {
  subscriptions: [
    {
      id: SUB,
      resourceGroups: [
        {
          name: "plan",
          location: "eastus2",
          virtualNetworks: [{ name: "vnet", subnets: [{ name: "subnet" }] }],
          loadBalancers: [{ name: "lb", backendPools: ["pool"] }],
          scaleSets: [
            { name: "uni", capacity: 2, nics: [{ name: "uni-nic", primary: true, ipConfigurations: [ipc("ipc")] }] },
            {
              name: "flex",
              capacity: FLEX_VMS,
              orchestrationMode: "Flexible",
              nics: [{ name: "flex-nic", primary: true, ipConfigurations: [ipc("ipc")] }],
            },
          ],
          virtualMachines: [
            { name: "vm-in", nics: [{ name: "vm-in-nic", ipConfigurations: [ipc("ipc")] }] },
            { name: "vm-out", nics: [{ name: "vm-out-nic", resourceGroup: "prod", ipConfigurations: [ipc("ipc")] }] },
          ],
        },
        { name: "prod", location: "eastus2" },
      ],
    },
  ],
};

let app: IntakeApp;
beforeAll(async () => {
  app = await startIntakeApp({
    reconcile: true,
    seed: WORLD,
    env: {
      POOLSYNC_SCOPES: `/subscriptions/${SUB}/resourceGroups/plan`,
      POOLSYNC_PLAN_MAX_READS: String(MAX_READS),
      "AzureWebJobs.applyBackendPools.Disabled": "true",
    },
  });
});
afterAll(async () => {
  await app?.stop();
});

const declare = async (targetId: string, extra: Record<string, unknown> = {}) => {
  const res = await fetch(
    `${app.url}/api/memberships`,
    json({ targetId, backendPoolId: POOL, state: "present", ...extra }),
  );
  expect(res.status, await res.clone().text()).toBe(202);
};
const plan = (targetId: string) => fetch(`${app.url}/api/plan?targetId=${encodeURIComponent(targetId)}`);
const dryRun = (targetId: string, extra: Record<string, unknown> = {}) =>
  fetch(`${app.url}/api/memberships?dryRun=true`, json({ targetId, backendPoolId: POOL, state: "present", ...extra }));
const requests = () => app.sim!.control.stats().requests;
const poolsync = (...args: string[]) =>
  new Promise<{ code: number; stdout: string }>((resolve) => {
    execFile(
      process.execPath,
      [join(APP_DIR, "dist/src/cli/main.js"), ...args],
      { env: { ...process.env, POOLSYNC_URL: app.url, POOLSYNC_KEY: "" }, timeout: 30_000 },
      (err, stdout) => resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout }),
    );
  });

type Plan = {
  writes: { kind: string; id: string }[];
  unplaceable: { backendPoolId: string; ipConfiguration: string; reason: string }[];
  reads: { made: number; limit: number; cutShort: boolean; notRead?: string[]; notReadCount?: number };
};

describe("nothing outside POOLSYNC_SCOPES is read", () => {
  const refusal = `NIC ${PROD_NIC} of ${VM_OUT} is outside POOLSYNC_SCOPES or the VM's subscription: poolsync reads and writes nothing there`;

  it("GET /api/plan of a VM whose NIC is in another resource group reads the VM only, and names why nothing is planned", async () => {
    await declare(VM_OUT);
    const res = await plan(VM_OUT);
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as Plan;
    expect(body.writes).toEqual([]);
    expect(body.unplaceable).toEqual([{ backendPoolId: POOL, ipConfiguration: "", reason: refusal }]);
    expect(app.sim!.control.stats(PROD_NIC)).toMatchObject({ nicGets: 0, nicPuts: 0, requests: 0 });
  });

  it("a dry run of it neither", async () => {
    const res = await dryRun(VM_OUT, { state: "absent" });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { plan: Plan }).plan.unplaceable.map((u) => u.reason)).toEqual([refusal]);
    expect(app.sim!.control.stats(PROD_NIC).requests).toBe(0);
  });
});

describe(`the declaration cap (${MAX_DECLARATIONS_PER_CALLER} present declarations per caller and target)`, () => {
  it("a dry run beyond it is refused as the declaration would be: 429 naming the cap, and the real one alike", async () => {
    await mapLimit(
      Array.from({ length: MAX_DECLARATIONS_PER_CALLER }, (_, i) => i),
      8,
      (i) => declare(VM_IN, { ipConfiguration: `c-${i}` }),
    );
    const message = `caller function-key holds ${MAX_DECLARATIONS_PER_CALLER} present declarations on this target, the most one caller may (${MAX_DECLARATIONS_PER_CALLER}) (cap: present declarations per caller)`;
    const rows = (await app.membershipRows()).length;
    for (const res of [
      await dryRun(VM_IN, { ipConfiguration: "one-more" }),
      await fetch(
        `${app.url}/api/memberships`,
        json({ targetId: VM_IN, backendPoolId: POOL, state: "present", ipConfiguration: "one-more" }),
      ),
    ]) {
      expect(res.status).toBe(429);
      expect(await res.json()).toEqual({ error: { code: "too_many_declarations", message } });
    }
    expect((await app.membershipRows()).length).toBe(rows);
    // An absent, and a declaration the target already holds, always pass: their dry runs plan.
    expect((await dryRun(VM_IN, { ipConfiguration: "one-more", state: "absent" })).status).toBe(200);
    expect((await dryRun(VM_IN, { ipConfiguration: "c-0" })).status).toBe(200);
  });
});

describe("the ARM reads of one plan are bounded (POOLSYNC_PLAN_MAX_READS)", () => {
  it(`a Flexible scale set of ${FLEX_VMS} VMs: ${MAX_READS} reads, and the answer names the VMs the bound left out`, async () => {
    await declare(FLEX);
    const before = requests();
    const res = await plan(FLEX);
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as Plan;
    expect(requests() - before).toBe(MAX_READS);
    const vms = app
      .sim!.control.virtualMachines(FLEX)
      .map((vm) => String(vm.id))
      .sort();
    expect(vms).toHaveLength(FLEX_VMS);
    // The model's GET and the VM LIST, then one NIC per VM until the bound: the last two VMs are not read.
    expect(body.reads).toEqual({
      made: MAX_READS,
      limit: MAX_READS,
      cutShort: true,
      notRead: vms.slice(MAX_READS - 2),
      notReadCount: FLEX_VMS - (MAX_READS - 2),
    });
    expect(body.writes.map((w) => w.kind)).toEqual(["model", ...Array(MAX_READS - 2).fill("nic")]);

    // The CLI says the plan is partial, and what it left out.
    const cli = await poolsync("plan", FLEX);
    expect(cli.code).toBe(0);
    const lines = cli.stdout.trim().split("\n");
    const cut = lines.findIndex((l) => l.startsWith("  partial plan:"));
    expect(lines.slice(cut)).toEqual([
      `  partial plan: the bound of ${MAX_READS} ARM reads (POOLSYNC_PLAN_MAX_READS) left 2 resources unread and unplanned:`,
      ...vms.slice(MAX_READS - 2).map((id) => `    not read: ${id}`),
    ]);
  });

  it("a plan within the bound says so", async () => {
    await declare(UNI);
    const body = (await (await plan(UNI)).json()) as Plan;
    expect(body.reads).toEqual({ made: 2, limit: MAX_READS, cutShort: false });
    expect(body.writes.map((w) => w.kind)).toEqual(["model", "instance", "instance"]);
  });
});

describe("ARM's errors are answered as ARM's: 502, or 503 with its Retry-After, and its code", () => {
  const modelGet = { method: "GET", path: "/virtualMachineScaleSets/uni$" };
  const errorOf = async (res: Response) => ((await res.json()) as { error: unknown }).error;

  it("503 with Retry-After → 503 arm_unavailable with that Retry-After, the plan and the dry run alike", async () => {
    app.sim!.control.injectFault({ ...modelGet, status: 503, headers: { "retry-after": "7" }, times: 2 });
    for (const res of [await plan(UNI), await dryRun(UNI)]) {
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("7");
      expect(await errorOf(res)).toEqual({
        code: "arm_unavailable",
        message:
          "ARM answered 503 ServiceUnavailable to a read the plan needed; nothing was written; try again after 7 s",
        arm: { status: 503, code: "ServiceUnavailable" },
      });
    }
  });

  it("a 500 without Retry-After → 503 without one (poolsync invents none)", async () => {
    app.sim!.control.injectFault({ ...modelGet, status: 500 });
    const res = await plan(UNI);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBeNull();
    expect(await errorOf(res)).toMatchObject({
      code: "arm_unavailable",
      arm: { status: 500, code: "InternalServerError" },
    });
  });

  it("403 AuthorizationFailed → 502 arm_error with ARM's code, and no ARM message echoed", async () => {
    app.sim!.control.injectFault({
      ...modelGet,
      status: 403,
      times: 2,
      body: {
        error: { code: "AuthorizationFailed", message: "The client 'secret-object-id' does not have authorization" },
      },
    });
    for (const res of [await plan(UNI), await dryRun(UNI)]) {
      expect(res.status).toBe(502);
      expect(await errorOf(res)).toEqual({
        code: "arm_error",
        message: "ARM answered 403 AuthorizationFailed to a read the plan needed; nothing was written",
        arm: { status: 403, code: "AuthorizationFailed" },
      });
    }
  });

  // Last: a 429 closes this kind of read in the app's read pacer for its Retry-After.
  it("429 with Retry-After → 503 arm_throttled with it; the next plan is held by poolsync's own pacing, without a read", async () => {
    app.sim!.control.injectFault({ ...modelGet, retryAfterSeconds: 30 });
    const res = await plan(UNI);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("30");
    expect(await errorOf(res)).toEqual({
      code: "arm_throttled",
      message:
        "ARM throttles the reads the plan needs (429 OperationNotAllowed); nothing was written; try again after 30 s",
      arm: { status: 429, code: "OperationNotAllowed" },
    });
    const before = requests();
    const again = await dryRun(UNI);
    expect(again.status).toBe(503);
    expect(Number(again.headers.get("retry-after"))).toBeGreaterThan(20);
    expect(await errorOf(again)).toMatchObject({ code: "arm_throttled" });
    expect(requests()).toBe(before);
    expect((await app.membershipRows()).filter((r) => r.requestId === "dry-run")).toEqual([]);
  });
});
