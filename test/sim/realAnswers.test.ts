// What the recordings and Azure's facts show beyond one answer: the 409 window of a no-op write, a scale set marked
// for deletion, conflicts across one scale set's resources, the slow operation profile, and Flexible VMs' own
// network profile, NIC names and upgrades.
import { afterEach, describe, expect, it } from "vitest";
import { OPERATION_PROFILES, startArmSimulator, type ArmSimulator, type ArmSimulatorOptions } from "../../sim/index";
import { arm, instanceChange, nicsOf, POOL_ID, RG_PATH, VMSS_PATH } from "./testkit";

const FLEX_PATH = `${RG_PATH}/providers/Microsoft.Compute/virtualMachineScaleSets/etag-k8s-flex-0`;

let sim: ArmSimulator | undefined;
async function start(opts: ArmSimulatorOptions = {}): Promise<ArmSimulator> {
  sim = await startArmSimulator({
    seed: "demo",
    operationDurationMs: 5_000,
    instanceWritePropagatesToScaleSetAfterMs: 60_000,
    ...opts,
  });
  return sim;
}
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

describe("a no-op write", () => {
  it("answers 200, the same ETag, charge 0, Updating, and runs an operation: a second write meets 409 until it ends", async () => {
    const s = await start();
    const ss = (await arm(s.url, "GET", VMSS_PATH)).body;
    const noop = await arm(s.url, "PUT", VMSS_PATH, { body: ss });
    expect([noop.status, noop.headers.get("etag"), noop.headers.get("x-ms-request-charge")]).toEqual([200, '"1"', "0"]);
    expect(noop.body.properties.provisioningState).toBe("Updating");
    expect(noop.headers.get("azure-asyncoperation")).toBeTruthy();
    expect((await arm(s.url, "PUT", VMSS_PATH, { body: ss })).status).toBe(409);
    s.control.settle();
    expect((await arm(s.url, "GET", VMSS_PATH)).body.properties.provisioningState).toBe("Succeeded");
    expect((await arm(s.url, "PUT", VMSS_PATH, { body: ss })).status).toBe(200);
  });
});

describe("a scale set marked for deletion", () => {
  it("refuses a model write with 409 OperationNotAllowed and CRP's text", async () => {
    const s = await start();
    const ss = (await arm(s.url, "GET", VMSS_PATH)).body;
    expect((await arm(s.url, "DELETE", VMSS_PATH)).status).toBe(202);
    const r = await arm(s.url, "PUT", VMSS_PATH, { body: ss });
    expect(r.status).toBe(409);
    expect(r.body.error).toEqual({
      code: "OperationNotAllowed",
      message:
        "Operation 'Update Virtual Machine Scale Set' is not allowed on Virtual Machine Scale Set 'etag-k8s-mp-0' since it is marked for deletion. For more information on your operations, please refer to https://aka.ms/activitylog",
    });
  });
});

describe("conflicts beyond one resource (conflictAcrossScaleSet)", () => {
  it("instance deletes of one scale set exclude each other", async () => {
    const s = await start();
    expect((await arm(s.url, "DELETE", `${VMSS_PATH}/virtualMachines/0`)).status).toBe(202);
    const second = await arm(s.url, "DELETE", `${VMSS_PATH}/virtualMachines/1`);
    expect([second.status, second.body.error.code]).toEqual([409, "Conflict"]);
    s.control.settle();
    expect((await arm(s.url, "DELETE", `${VMSS_PATH}/virtualMachines/1`)).status).toBe(202);
  });

  it("a model write and instance writes exclude each other, whichever came first", async () => {
    const s = await start();
    const ss = (await arm(s.url, "GET", VMSS_PATH)).body;
    nicsOf(ss)[0].properties.ipConfigurations[0].properties.loadBalancerBackendAddressPools = [{ id: POOL_ID }];
    expect((await arm(s.url, "PUT", VMSS_PATH, { body: ss })).status).toBe(200);
    expect((await arm(s.url, "PUT", `${VMSS_PATH}/virtualMachines/0`, { body: instanceChange("a") })).status).toBe(409);
    s.control.settle();
    expect((await arm(s.url, "PUT", `${VMSS_PATH}/virtualMachines/0`, { body: instanceChange("a") })).status).toBe(200);
    // Two instances' writes do not exclude each other; a model write waits for both.
    expect((await arm(s.url, "PUT", `${VMSS_PATH}/virtualMachines/1`, { body: instanceChange("b") })).status).toBe(200);
    const ssNow = (await arm(s.url, "GET", VMSS_PATH)).body;
    expect((await arm(s.url, "PUT", VMSS_PATH, { body: { ...ssNow, tags: { x: "1" } } })).status).toBe(409);
  });

  it("is a setting: off, only the same resource conflicts", async () => {
    const s = await start({ conflictAcrossScaleSet: false });
    expect((await arm(s.url, "DELETE", `${VMSS_PATH}/virtualMachines/0`)).status).toBe(202);
    expect((await arm(s.url, "DELETE", `${VMSS_PATH}/virtualMachines/1`)).status).toBe(202);
  });
});

describe("operation profiles", () => {
  it("slow: scale set and instance writes take 30 s, other operations 2 s", async () => {
    const s = await start({ ...OPERATION_PROFILES.slow });
    const ss = (await arm(s.url, "GET", VMSS_PATH)).body;
    await arm(s.url, "PUT", VMSS_PATH, { body: { ...ss, tags: { x: "1" } } });
    await arm(
      s.url,
      "DELETE",
      `${RG_PATH}/providers/Microsoft.Compute/virtualMachineScaleSets/etag-k8s-mp-auto/virtualMachines/0`,
    );
    const durations = s.control
      .operations()
      .map((o) => [o.resourceId.split("/").slice(-2).join("/"), o.endsAt - Date.parse(o.startTime)] as const)
      .map(([id, ms]) => [id, Math.round(ms / 1000)]);
    expect(durations).toEqual([
      ["virtualMachineScaleSets/etag-k8s-mp-0", 30],
      ["virtualMachines/0", 2],
    ]);
  });
});

describe("Flexible VMs", () => {
  it("carry their own networkApiVersion and NIC configurations; their NICs are not named after them", async () => {
    const s = await start();
    for (const vm of s.control.virtualMachines(FLEX_PATH) as Any[]) {
      const got = (await arm(s.url, "GET", vm.id)).body;
      expect(got.properties.networkProfile.networkApiVersion).toBe("2020-11-01");
      expect(got.properties.networkProfile.networkInterfaceConfigurations.map((c: Any) => c.name)).toEqual([
        "etag-k8s-flex-0-nic-0",
      ]);
      const nicId = got.properties.networkProfile.networkInterfaces[0].id as string;
      expect(nicId.split("/").pop()).not.toContain(got.name);
      const nic = (await arm(s.url, "GET", nicId)).body;
      expect(nic.properties.virtualMachine.id).toBe(got.id);
      expect(nic.properties.primary).toBe(true);
    }
  });

  it.each([
    [false, [[], []]],
    [true, [[POOL_ID], [POOL_ID]]],
  ])(
    "Automatic upgrades roll a model's pool to the VMs' NICs only with flexibleUpgradeRollsNetwork (%s)",
    async (rolls, expected) => {
      const s = await start({ flexibleUpgradeRollsNetwork: rolls, upgradeStepMs: 1000 });
      s.control.write(FLEX_PATH, (r) => {
        (r["properties"] as Any).upgradePolicy = { mode: "Automatic" };
        nicsOf(r)[0].properties.ipConfigurations[0].properties.loadBalancerBackendAddressPools = [{ id: POOL_ID }];
      });
      s.control.settle();
      const pools = (s.control.virtualMachines(FLEX_PATH) as Any[]).map((vm) => {
        const nic = s.control.resource(vm.properties.networkProfile.networkInterfaces[0].id as string) as Any;
        return (
          (nic.properties.ipConfigurations[0].properties.loadBalancerBackendAddressPools ?? []) as { id: string }[]
        ).map((p) => p.id);
      });
      expect(pools).toEqual(expected);
    },
  );
});
