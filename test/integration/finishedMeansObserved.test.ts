import { afterEach, describe, expect, it } from "vitest";
import { memoryLogger } from "../../src/app/logger";
import { armComputeFromConfig, createServices, type Services } from "../../src/app/services";
import { QUEUE_DECLARER, type Declaration } from "../../src/core/declarations";
import type { Clock, ComputePort } from "../../src/core/ports";
import type { JsonObject } from "../../sim";
import { addIpConfig, addNicPool, instanceNics, modelNics, nicPoolsByIpConfig, poolsByIpConfig } from "../../sim/wire";
import { DEMO, manualClock, startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";
import { poolId, scaleSetId, WIDE_SUBSCRIPTION, wideWorld } from "../../devkit/worlds";

/**
 * "Finished" means observed (issue 41): a declaration is finished only from ARM state read after its last write, or
 * from that write's own answer. Each case is a way the soak once reported an `absent` done while the pool stayed, or
 * lost another writer's ip configuration: a pass that kept writing after its lease lapsed, a pass that trusted a cached
 * row, a write computed from an instance body read before the instance ID was reused.
 */

const VMSS = scaleSetId(WIDE_SUBSCRIPTION, "wide", "vmss-0");
const ref = scaleSetRef(VMSS);
const POOLS = [0, 1].map((i) => poolId(WIDE_SUBSCRIPTION, "wide", "lb", `pool-${i}`));
const SUBNET = `/subscriptions/${WIDE_SUBSCRIPTION}/resourceGroups/wide/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes`;

const FLEX = DEMO.scaleSetId.replace(/etag-k8s-mp-0$/, "etag-k8s-flex-0");
const POOL_DEMO = DEMO.poolId.toLowerCase();
const flexDeclaration = (state: "present" | "absent", at: number, id: string): Declaration => ({
  ...declaration(DEMO.poolId, state, at, id),
  scaleSetId: FLEX,
});

const modelPools = (h: Harness) => poolsByIpConfig(modelNics(h.sim.control.resource(VMSS)!))["ipConfig0"] ?? [];
const instancePools = (h: Harness, id: string) =>
  poolsByIpConfig(instanceNics(h.sim.control.resource(`${VMSS}/virtualMachines/${id}`)!))["ipConfig0"] ?? [];

/** A gate a wrapped call waits at: the test sees it reached, does what it must, then lets it through. */
function gate() {
  let reach!: () => void;
  let open!: () => void;
  const reached = new Promise<void>((r) => (reach = r));
  const opened = new Promise<void>((r) => (open = r));
  return { reached, open, pass: async () => (reach(), opened) };
}

function declaration(pool: string, state: "present" | "absent", at: number, id: string): Declaration {
  return {
    scaleSetId: VMSS,
    backendPoolId: pool,
    ipConfiguration: "",
    state,
    declaredAt: new Date(at).toISOString(),
    requestId: id,
    declaredBy: QUEUE_DECLARER,
  };
}

describe("a declaration is finished only from what ARM holds (issue 41)", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it("a pass whose lease lapsed while it was paused writes nothing: a later pass's finished absent stays true", async () => {
    const clock = manualClock(Date.now());
    h = await startHarness({
      clock,
      sim: { seed: wideWorld({ scaleSets: 1, capacity: 1, pools: 2 }) },
      env: { POOLSYNC_SCOPES: `/subscriptions/${WIDE_SUBSCRIPTION}`, POOLSYNC_GATHER_MILLISECONDS: "0" },
    });
    // Host A is paused (a frozen process, a long GC pause) between its read of the model and its write: its lease
    // renewals never run meanwhile.
    const paused = gate();
    const arm = armComputeFromConfig(h.config, clock);
    const compute: ComputePort = {
      ...bound(arm),
      getScaleSet: async (...a) => {
        const model = await arm.getScaleSet(...a);
        await paused.pass();
        return model;
      },
    };
    const frozenRenewals: Clock = {
      now: clock.now,
      sleep: (ms, signal) =>
        signal ? new Promise<void>((r) => signal.addEventListener("abort", () => r())) : clock.sleep(ms),
    };
    const hostA = createServices(h.config, { clock: frozenRenewals, compute, log: memoryLogger(), random: () => 0.5 });
    const hostB: Services = h.services;

    await hostB.declarations.upsert(ref, declaration(POOLS[0]!, "present", clock.now(), "d1"));
    const passA = hostA.reconcile(ref, { reason: "declare present", attempt: 0 });
    await paused.reached;

    // Past the lease: host B takes the scale set for a newer `absent` of the same pool, which ARM already shows.
    clock.advance(h.config.reconcileLeaseMs + 1_000);
    await hostB.declarations.upsert(ref, declaration(POOLS[0]!, "absent", clock.now(), "d2"));
    const reportB = await hostB.reconcile(ref, { reason: "declare absent", attempt: 0 });
    expect(reportB.result).not.toBe("deferred");
    const [afterB] = await hostB.declarations.listForTarget(ref);
    expect(afterB).toMatchObject({ requestId: "d2", outcome: { kind: "applied", appliedEverywhere: true } });

    // Host A wakes up and goes on where it stopped.
    paused.open();
    await passA.catch(() => undefined);
    await hostA.coalescer.idle();

    // What poolsync reports is what Azure holds: the finished absent is true.
    expect(modelPools(h)).not.toContain(POOLS[0]!.toLowerCase());
    expect(h.sim.control.stats(VMSS).puts).toBe(0);
    const [d] = await hostB.declarations.listForTarget(ref);
    expect(d).toMatchObject({ requestId: "d2", outcome: { kind: "applied", appliedEverywhere: true } });
  });

  it("an absent is not finished from a cached row: another writer's unannounced add is found and removed", async () => {
    const clock = manualClock(Date.now());
    h = await startHarness({
      clock,
      cacheEnabled: true,
      sim: { seed: wideWorld({ scaleSets: 1, capacity: 2, pools: 2 }) },
      env: { POOLSYNC_SCOPES: `/subscriptions/${WIDE_SUBSCRIPTION}` },
    });
    const s = h.services;
    await s.declarations.upsert(ref, declaration(POOLS[1]!, "present", clock.now(), "d1"));
    expect((await s.reconcile(ref, { reason: "test", attempt: 0 })).result).toBe("applied");
    h.sim.control.settle();
    // The cache is warm. Another writer adds pool-0 to the model and both instances; its events never arrive.
    const addPool0 = (r: JsonObject) => {
      const props = r["properties"] as JsonObject;
      const nics = props["virtualMachineProfile"] ? modelNics(r) : instanceNics(r);
      const ipc = nics[0]!.properties.ipConfigurations[0]!;
      ipc.properties.loadBalancerBackendAddressPools = [
        ...(ipc.properties.loadBalancerBackendAddressPools ?? []),
        { id: POOLS[0]! },
      ];
    };
    h.sim.control.write(VMSS, addPool0);
    h.sim.control.settle(); // the model write ends first: CRP answers an instance write during it with 409
    for (const id of ["0", "1"]) h.sim.control.write(`${VMSS}/virtualMachines/${id}`, addPool0);
    h.sim.control.settle();

    clock.advance(1_000);
    await s.declarations.upsert(ref, declaration(POOLS[0]!, "absent", clock.now(), "d2"));
    await s.reconcile(ref, { reason: "test", attempt: 0 });
    h.sim.control.settle();

    const d2 = (await s.declarations.listForTarget(ref)).find((d) => d.requestId === "d2");
    if (d2?.outcome.appliedEverywhere) {
      expect(modelPools(h)).not.toContain(POOLS[0]!.toLowerCase());
      for (const id of ["0", "1"]) expect(instancePools(h, id)).not.toContain(POOLS[0]!.toLowerCase());
    }
    // And it is finished: what the pass read from ARM made it so.
    expect(d2?.outcome).toMatchObject({ kind: "applied", appliedEverywhere: true });
  });

  it("a Flexible scale set's absent is not finished from cached NIC rows: another writer's unannounced add is removed", async () => {
    h = await startHarness({ cacheEnabled: true });
    const c = h.sim.control;
    const flex = scaleSetRef(FLEX);
    const nics = c
      .virtualMachines(FLEX)
      .map((vm) => (vm["properties"] as { networkProfile: { networkInterfaces: { id: string }[] } }).networkProfile)
      .map((p) => p.networkInterfaces[0]!.id);
    const at = Date.now();
    await h.services.declarations.upsert(flex, { ...flexDeclaration("present", at, "f1") });
    expect((await h.services.reconcile(flex, { reason: "test", attempt: 0 })).result).toBe("applied");
    c.settle();
    for (const nic of nics) expect(nicPoolsByIpConfig(c.resource(nic)!)["ipConfig0"]).toContain(POOL_DEMO);
    await h.services.declarations.upsert(flex, { ...flexDeclaration("absent", at + 1_000, "f2") });
    expect((await h.services.reconcile(flex, { reason: "test", attempt: 0 })).result).toBe("applied");
    c.settle();
    // The NIC rows are warm and say "absent". Another writer puts our pool back on one NIC; no event arrives.
    c.write(nics[0]!, addNicPool("ipConfig0", DEMO.poolId));
    c.settle();
    await h.services.declarations.upsert(flex, { ...flexDeclaration("absent", at + 2_000, "f3") });
    await h.services.reconcile(flex, { reason: "test", attempt: 0 });
    c.settle();
    const [d] = await h.services.declarations.listForTarget(flex);
    expect(d).toMatchObject({ requestId: "f3", outcome: { kind: "applied", appliedEverywhere: true } });
    for (const nic of nics) expect(nicPoolsByIpConfig(c.resource(nic)!)["ipConfig0"]).not.toContain(POOL_DEMO);
  });

  it("an instance body read before its ID was reused is read again before the write: the new VM keeps another writer's ip configuration", async () => {
    const clock = manualClock(Date.now());
    h = await startHarness({
      clock,
      sim: { seed: wideWorld({ scaleSets: 1, capacity: 2, pools: 2 }) },
      env: { POOLSYNC_SCOPES: `/subscriptions/${WIDE_SUBSCRIPTION}`, POOLSYNC_INSTANCE_CONCURRENCY: "1" },
    });
    const sim = h.sim.control;
    await h.services.declarations.upsert(ref, declaration(POOLS[0]!, "present", clock.now(), "d1"));
    expect((await h.services.reconcile(ref, { reason: "test", attempt: 0 })).result).toBe("applied");
    sim.settle();
    const dead = sim.resource(`${VMSS}/virtualMachines/1`)!;

    // The next pass lists both instances and writes them one at a time; instance 0's write takes minutes (a slow
    // operation). Meanwhile another writer puts its ip configuration in the model, instance 1 is scaled in, and a
    // scale-out brings ID 1 back as a new VM built from that model, its ETag back where the dead one's was.
    const slow = gate();
    const arm = armComputeFromConfig(h.config, clock);
    const compute: ComputePort = {
      ...bound(arm),
      writeInstanceNics: async (r, ...rest) => {
        const answer = await arm.writeInstanceNics(r, ...rest);
        if (r.instanceId === "0") await slow.pass();
        return answer;
      },
    };
    const host = createServices(h.config, { clock, compute, log: memoryLogger(), random: () => 0.5 });
    await host.declarations.upsert(ref, declaration(POOLS[1]!, "present", clock.now(), "d2"));
    const pass = host.reconcile(ref, { reason: "test", attempt: 0 });
    await slow.reached;
    sim.write(VMSS, addIpConfig("theirs", SUBNET));
    sim.settle(); // its operation ends first: a scale meets it with 409 otherwise
    sim.scale(VMSS, 1);
    sim.settle();
    sim.scale(VMSS, 2);
    sim.settle();
    // The new VM starts at "1" and stays there once created (recorded); one write of its own (another writer's user
    // data) brings it to the "2" the dead one had.
    sim.write(`${VMSS}/virtualMachines/1`, (r) => {
      (r["properties"] as Record<string, unknown>)["userData"] = Buffer.from("theirs").toString("base64");
    });
    sim.settle();
    clock.advance(5 * 60_000);
    const reborn = sim.resource(`${VMSS}/virtualMachines/1`)!;
    expect((reborn["properties"] as { vmId: string }).vmId).not.toBe((dead["properties"] as { vmId: string }).vmId);
    expect(reborn["etag"]).toBe(dead["etag"]);
    slow.open();
    await pass;
    sim.settle();

    const after = poolsByIpConfig(instanceNics(sim.resource(`${VMSS}/virtualMachines/1`)!));
    expect(Object.keys(after).sort()).toEqual(["ipConfig0", "theirs"]);
    expect([...after["ipConfig0"]!].sort()).toEqual(POOLS.map((p) => p.toLowerCase()).sort());
  });
});

/** The port's methods bound to it, so a test can replace one and spread the rest. */
function bound(arm: ComputePort): ComputePort {
  return {
    getScaleSet: (...a) => arm.getScaleSet(...a),
    listScaleSetsPage: (...a) => arm.listScaleSetsPage(...a),
    writeScaleSetNics: (...a) => arm.writeScaleSetNics(...a),
    listInstances: (...a) => arm.listInstances(...a),
    getInstance: (...a) => arm.getInstance(...a),
    writeInstanceNics: (...a) => arm.writeInstanceNics(...a),
    getVm: (...a) => arm.getVm(...a),
    listVms: (...a) => arm.listVms(...a),
  };
}
