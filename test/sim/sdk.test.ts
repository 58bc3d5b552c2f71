// The real ComputeManagementClient of @azure/arm-compute against the simulator: what poolsync's Compute edge will do.
import type { ComputeManagementClient, VirtualMachineScaleSet } from "@azure/arm-compute";
import { RestError } from "@azure/core-rest-pipeline";
import { afterEach, describe, expect, it } from "vitest";
import { simComputeClient } from "../../sim/client";
import { startArmSimulator, type ArmSimulator, type ArmSimulatorOptions } from "../../sim/index";
import { POOL_ID, SUB, SUBNET_ID, VMSS_PATH } from "./testkit";

const POLL = { updateIntervalInMs: 5 };
let sim: ArmSimulator | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

async function start(opts: ArmSimulatorOptions = {}): Promise<{ sim: ArmSimulator; client: ComputeManagementClient }> {
  sim = await startArmSimulator({ seed: "demo", ...opts });
  return { sim, client: simComputeClient(sim, SUB) };
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

describe.each([false, true])("ComputeManagementClient (tls: %s)", (tls) => {
  it("gets a scale set with its etag and network profile", async () => {
    const { client } = await start({ tls });
    const ss = await client.virtualMachineScaleSets.get("etag", "etag-k8s-mp-0");
    expect(ss.etag).toBe('"1"');
    expect(ss.id).toBe(VMSS_PATH);
    expect(ss.sku?.capacity).toBe(2);
    const nic = ss.virtualMachineProfile?.networkProfile?.networkInterfaceConfigurations?.[0];
    expect(nic).toMatchObject({
      name: "etag-k8s-mp-0-nic-0",
      primary: true,
      enableAcceleratedNetworking: true,
      enableIPForwarding: true,
    });
    expect(nic?.ipConfigurations?.[0]).toMatchObject({
      name: "ipConfig0",
      primary: true,
      privateIPAddressVersion: "IPv4",
      subnet: { id: SUBNET_ID },
    });
  });

  it("surfaces a stale ifMatch as RestError 412 PreconditionFailed", async () => {
    const { sim, client } = await start({ tls });
    const ss = await client.virtualMachineScaleSets.get("etag", "etag-k8s-mp-0");
    sim.control.write(VMSS_PATH, (r) => {
      r["tags"] = { other: "writer" };
    });
    const err = await client.virtualMachineScaleSets
      .update("etag", "etag-k8s-mp-0", { tags: { me: "1" } }, { ifMatch: ss.etag, ...POLL })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RestError);
    expect(err).toMatchObject({ statusCode: 412, code: "PreconditionFailed" });
    expect(sim.control.resource(VMSS_PATH)?.["tags"]).toEqual({ other: "writer" });
  });
});

describe("ComputeManagementClient", () => {
  it("lists scale sets and instances page by page (nextLink)", async () => {
    const { sim, client } = await start({ listPageSize: 1 });
    sim.control.scale(VMSS_PATH, 3);
    sim.control.settle();
    const pages = await collect(client.virtualMachineScaleSetVMs.list("etag", "etag-k8s-mp-0").byPage());
    expect(pages.map((p) => p.map((v) => v.instanceId))).toEqual([["0"], ["1"], ["2"]]);
    expect(sim.control.stats(VMSS_PATH).instanceLists).toBe(3);
    const all = await collect(client.virtualMachineScaleSets.list("etag"));
    expect(all.map((s) => s.name)).toEqual(["etag-k8s-mp-0", "etag-k8s-mp-auto", "etag-k8s-flex-0"]);
  });

  it("creates with createOrUpdate (201, etag 1, instances from the model) and polls to the end", async () => {
    const { sim, client } = await start();
    const demo = await client.virtualMachineScaleSets.get("etag", "etag-k8s-mp-0");
    const { id: _id, name: _n, etag: _e, ...model } = demo;
    const created = await client.virtualMachineScaleSets.createOrUpdate(
      "etag",
      "second",
      { ...model, sku: { ...model.sku, capacity: 1 } } as VirtualMachineScaleSet,
      {
        ifNoneMatch: "*",
        ...POLL,
      },
    );
    expect(created.etag).toBe('"1"');
    expect(created.provisioningState).toBe("Succeeded");
    const vms = await collect(client.virtualMachineScaleSetVMs.list("etag", "second"));
    expect(vms.map((v) => [v.name, v.provisioningState, v.latestModelApplied])).toEqual([
      ["second_0", "Succeeded", true],
    ]);
    expect(
      sim.control
        .events()
        .some((e) => e.subject.endsWith("/second") && e.eventType === "Microsoft.Resources.ResourceWriteSuccess"),
    ).toBe(true);
  });

  it("updates the model (PATCH) with ifMatch: new etag, existing instances not on the latest model", async () => {
    const { client } = await start();
    const ss = await client.virtualMachineScaleSets.get("etag", "etag-k8s-mp-0");
    const nics = ss.virtualMachineProfile?.networkProfile?.networkInterfaceConfigurations ?? [];
    const ipc = nics[0]?.ipConfigurations?.[0];
    if (ipc) ipc.loadBalancerBackendAddressPools = [{ id: POOL_ID }];
    const updated = await client.virtualMachineScaleSets.update(
      "etag",
      "etag-k8s-mp-0",
      { virtualMachineProfile: { networkProfile: { networkInterfaceConfigurations: nics } } },
      { ifMatch: ss.etag, ...POLL },
    );
    expect(updated.etag).toBe('"2"');
    expect(updated.sku?.capacity).toBe(2);
    expect(
      updated.virtualMachineProfile?.networkProfile?.networkInterfaceConfigurations?.[0]?.ipConfigurations?.[0]
        ?.loadBalancerBackendAddressPools,
    ).toEqual([{ id: POOL_ID }]);
    const vm = await client.virtualMachineScaleSetVMs.get("etag", "etag-k8s-mp-0", "0");
    expect(vm.latestModelApplied).toBe(false);
  });

  it("updates an instance with polling to the end; the scale set's etag follows shortly after", async () => {
    const { sim, client } = await start({ instanceWritePropagatesToScaleSetAfterMs: 50 });
    const vm = await client.virtualMachineScaleSetVMs.get("etag", "etag-k8s-mp-0", "1");
    const ipc = vm.networkProfileConfiguration?.networkInterfaceConfigurations?.[0]?.ipConfigurations?.[0];
    if (ipc) ipc.loadBalancerBackendAddressPools = [{ id: POOL_ID }];
    const poller = client.virtualMachineScaleSetVMs.update("etag", "etag-k8s-mp-0", "1", vm, {
      ifMatch: vm.etag,
      ...POLL,
    });
    const done = await poller.pollUntilDone();
    expect(done.etag).toBe('"2"');
    expect(done.provisioningState).toBe("Succeeded");
    expect(sim.control.stats(VMSS_PATH).operationGets).toBeGreaterThanOrEqual(1);
    expect(sim.control.poolMembers(POOL_ID)).toEqual([
      `${VMSS_PATH}/virtualMachines/1/networkInterfaces/etag-k8s-mp-0-nic-0/ipConfigurations/ipConfig0`,
    ]);
    sim.control.clock.advance(50);
    expect((await client.virtualMachineScaleSets.get("etag", "etag-k8s-mp-0")).etag).toBe('"2"');
  });
});

describe("ComputeManagementClient on the strict simulator", () => {
  it("speaks an api-version with ETags; a stripEtag answer leaves etag undefined", async () => {
    const { sim, client } = await start();
    expect((await client.virtualMachineScaleSets.get("etag", "etag-k8s-mp-0")).etag).toBe('"1"');
    sim.control.injectFault({ method: "GET", path: "virtualMachines$", stripEtag: true });
    const vms = await collect(client.virtualMachineScaleSetVMs.list("etag", "etag-k8s-mp-0"));
    expect(vms.map((v) => v.etag)).toEqual([undefined, undefined]);
  });

  it("an empty ifMatch (what a client that lost its ETag sends) is a RestError 400, and nothing is written", async () => {
    const { sim, client } = await start();
    const err = await client.virtualMachineScaleSets
      .update("etag", "etag-k8s-mp-0", { tags: { me: "1" } }, { ifMatch: "", ...POLL })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ statusCode: 400, code: "InvalidParameter" });
    expect(sim.control.resource(VMSS_PATH)?.["etag"]).toBe('"1"');
  });

  it("surfaces 409 while an operation runs on the resource, and a preempted operation as Canceled", async () => {
    const { client } = await start({ operationDurationMs: 60_000, timeScale: 0.001 });
    const first = client.virtualMachineScaleSets.update("etag", "etag-k8s-mp-0", { tags: { a: "1" } }, POLL);
    await first.submitted();
    const err = await client.virtualMachineScaleSets
      .update("etag", "etag-k8s-mp-0", { tags: { a: "2" } }, POLL)
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ statusCode: 409, code: "Conflict" });
    expect((err as Error).message).toMatch(/^The request failed due to conflict with a concurrent request/);
    await sim?.stop();
    const again = await start({ operationDurationMs: 60_000, timeScale: 0.001, preemptRunningOperation: true });
    const older = again.client.virtualMachineScaleSets.update("etag", "etag-k8s-mp-0", { tags: { a: "1" } }, POLL);
    await older.submitted();
    const newer = again.client.virtualMachineScaleSets.update("etag", "etag-k8s-mp-0", { tags: { a: "2" } }, POLL);
    await newer.submitted();
    await expect(older.pollUntilDone()).rejects.toThrow(/OperationPreempted|Canceled|preempted/i);
    again.sim.control.settle();
    expect((await newer.pollUntilDone()).tags).toEqual({ a: "2" });
  });

  it("Automatic upgrades: a model write through the SDK reaches every instance without an instance write", async () => {
    const { sim, client } = await start({ upgradeStepMs: 1000 });
    const ss = await client.virtualMachineScaleSets.get("etag", "etag-k8s-mp-auto");
    expect(ss.upgradePolicy?.mode).toBe("Automatic");
    const nics = ss.virtualMachineProfile?.networkProfile?.networkInterfaceConfigurations ?? [];
    const ipc = nics[0]?.ipConfigurations?.[0];
    if (ipc) ipc.loadBalancerBackendAddressPools = [{ id: POOL_ID }];
    await client.virtualMachineScaleSets.createOrUpdate(
      "etag",
      "etag-k8s-mp-auto",
      { location: ss.location, virtualMachineProfile: { networkProfile: { networkInterfaceConfigurations: nics } } },
      { ifMatch: ss.etag, ...POLL },
    );
    sim.control.settle();
    const vms = await collect(client.virtualMachineScaleSetVMs.list("etag", "etag-k8s-mp-auto"));
    expect(vms.map((v) => [v.etag, v.latestModelApplied])).toEqual([
      ['"2"', true],
      ['"2"', true],
    ]);
    expect(sim.control.stats().instancePuts).toBe(0);
    expect(sim.control.poolMembers(POOL_ID)).toHaveLength(2);
  });

  it("a 429 (CreateVMScaleSetResource empty) reaches the caller with CRP's code and its Retry-After", async () => {
    const { sim } = await start({ throttling: { timeScale: 0.0001, arm: false }, operationDurationMs: 0 });
    // As poolsync's edge does: the SDK's own retry would sleep out the Retry-After (simulated seconds, real here).
    const client = simComputeClient(sim, SUB, { retryOptions: { maxRetries: 0 } });
    for (let i = 0; i < 12; i++)
      await client.virtualMachineScaleSets.update("etag", "etag-k8s-mp-0", { tags: { n: String(i) } }, POLL);
    const err = await client.virtualMachineScaleSets
      .update("etag", "etag-k8s-mp-0", { tags: { n: "x" } }, POLL)
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ statusCode: 429, code: "OperationNotAllowed" });
    const response = (err as RestError).response;
    expect(Number(response?.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});
