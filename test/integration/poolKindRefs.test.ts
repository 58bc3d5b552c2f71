import { afterEach, describe, expect, it } from "vitest";
import { QUEUE_DECLARER, type Declaration } from "../../src/core/declarations";
import { parseTargetId, type TargetRef } from "../../src/core/resourceIds";
import { instanceNics, modelNics, poolsByIpConfig } from "../../sim/wire";
import type { JsonObject } from "../../sim";
import { KINDS, KINDS_SUBSCRIPTION, poolKindWorld } from "../../devkit/poolKindWorld";
import { startHarness, type Harness } from "../support/harness";

/**
 * Inbound NAT pools, application gateway pools and moves (issue 43) through the real edges: each kind is a reference
 * on the target's ip configurations in a field of its own, written through the same edit and If-Match loop as a
 * backend pool; another writer's references of every kind survive.
 */

const target = (id: string): TargetRef => {
  const r = parseTargetId(id);
  if (!r.ok) throw new Error(r.reason);
  return r.value;
};
let seq = 0;
const declaration = (targetId: string, pool: string, state: "present" | "absent", extra: Partial<Declaration> = {}) =>
  ({
    scaleSetId: targetId,
    backendPoolId: pool,
    ipConfiguration: "",
    state,
    declaredAt: new Date(Date.now() + seq).toISOString(),
    requestId: `k${++seq}`,
    declaredBy: QUEUE_DECLARER,
    ...extra,
  }) satisfies Declaration;

const ipc = (nics: ReturnType<typeof modelNics>) => nics[0]!.properties.ipConfigurations[0]!.properties as JsonObject;
const ids = (v: unknown) => ((v ?? []) as { id: string }[]).map((p) => p.id.toLowerCase());

describe("NAT pools, gateway pools and moves (issue 43)", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });
  const start = () =>
    startHarness({
      sim: { seed: poolKindWorld({ capacity: 2 }) },
      env: { POOLSYNC_SCOPES: `/subscriptions/${KINDS_SUBSCRIPTION}`, POOLSYNC_GATHER_MILLISECONDS: "0" },
    });
  const pass = async (id: string) => {
    const r = await h!.services.reconcile(target(id), { reason: "test", attempt: 0 });
    h!.sim.control.settle();
    return r;
  };

  it("an inbound NAT pool joins the model and every instance; NRP derives a NAT rule per instance", async () => {
    h = await start();
    // Another writer's backend pool on the same ip configuration survives.
    h.sim.control.write(KINDS.scaleSet, (r) => {
      const p = ipc(modelNics(r));
      p["loadBalancerBackendAddressPools"] = [{ id: KINDS.nicPool2 }];
    });
    h.sim.control.settle();
    await h.services.declarations.upsert(target(KINDS.scaleSet), declaration(KINDS.scaleSet, KINDS.natPool, "present"));
    expect((await pass(KINDS.scaleSet)).result).toBe("applied");
    const model = ipc(modelNics(h.sim.control.resource(KINDS.scaleSet)!));
    expect(ids(model["loadBalancerInboundNatPools"])).toEqual([KINDS.natPool.toLowerCase()]);
    expect(ids(model["loadBalancerBackendAddressPools"])).toEqual([KINDS.nicPool2.toLowerCase()]);
    for (const i of h.sim.control.instances(KINDS.scaleSet))
      expect(ids(ipc(instanceNics(i))["loadBalancerInboundNatPools"])).toEqual([KINDS.natPool.toLowerCase()]);
    expect(h.sim.control.poolState(KINDS.natPool)?.ipConfigurations).toHaveLength(2);
    const [d] = await h.services.declarations.listForTarget(target(KINDS.scaleSet));
    expect(d?.outcome.kind).toBe("applied");
  });

  it("an application gateway pool joins a VM's NIC beside another writer's backend pool", async () => {
    h = await start();
    await h.services.declarations.upsert(target(KINDS.vm(0)), declaration(KINDS.vm(0), KINDS.nicPool, "present"));
    await h.services.declarations.upsert(target(KINDS.vm(0)), declaration(KINDS.vm(0), KINDS.gatewayPool, "present"));
    expect((await pass(KINDS.vm(0))).result).toBe("applied");
    expect(h.sim.control.poolState(KINDS.gatewayPool)?.ipConfigurations).toHaveLength(1);
    expect(h.sim.control.poolState(KINDS.nicPool)?.ipConfigurations).toHaveLength(1);
    // One NIC write for both kinds.
    expect(h.sim.control.stats().nicPuts).toBe(1);
    await h.services.declarations.upsert(target(KINDS.vm(0)), declaration(KINDS.vm(0), KINDS.gatewayPool, "absent"));
    await pass(KINDS.vm(0));
    expect(h.sim.control.poolState(KINDS.gatewayPool)?.ipConfigurations).toHaveLength(0);
    expect(h.sim.control.poolState(KINDS.nicPool)?.ipConfigurations).toHaveLength(1);
  });

  it("a move makes one write per resource, and the target is in one of the two pools at every moment", async () => {
    h = await start();
    await h.services.declarations.upsert(target(KINDS.scaleSet), declaration(KINDS.scaleSet, KINDS.nicPool, "present"));
    await pass(KINDS.scaleSet);
    expect(h.sim.control.poolState(KINDS.nicPool)?.ipConfigurations).toHaveLength(2);
    h.sim.control.resetStats();

    // Sampled at every event and every millisecond while the move runs: no instance is ever in neither pool.
    const neither: string[] = [];
    const sample = () => {
      const a = new Set(h!.sim.control.poolState(KINDS.nicPool)?.ipConfigurations.map((i) => i.toLowerCase()));
      const b = new Set(h!.sim.control.poolState(KINDS.nicPool2)?.ipConfigurations.map((i) => i.toLowerCase()));
      const model = poolsByIpConfig(modelNics(h!.sim.control.resource(KINDS.scaleSet)!))["ipc"] ?? [];
      if (!model.includes(KINDS.nicPool.toLowerCase()) && !model.includes(KINDS.nicPool2.toLowerCase()))
        neither.push("model");
      for (const i of ["0", "1"]) {
        const id = `${KINDS.scaleSet}/virtualMachines/${i}/networkInterfaces/ss-nic/ipConfigurations/ipc`.toLowerCase();
        if (!a.has(id) && !b.has(id)) neither.push(`instance ${i}`);
      }
    };
    const off = h.sim.control.onEvent(sample);
    const timer = setInterval(sample, 1);
    const ref = target(KINDS.scaleSet);
    const at = new Date(Date.now() + 1000).toISOString();
    await h.services.declarations.upsert(ref, {
      ...declaration(KINDS.scaleSet, KINDS.nicPool2, "present"),
      declaredAt: at,
    });
    await h.services.declarations.upsert(ref, {
      ...declaration(KINDS.scaleSet, KINDS.nicPool, "absent", { movedTo: KINDS.nicPool2 }),
      declaredAt: at,
    });
    await pass(KINDS.scaleSet);
    clearInterval(timer);
    off();
    sample();

    expect(neither).toEqual([]);
    expect(h.sim.control.poolState(KINDS.nicPool)?.ipConfigurations).toHaveLength(0);
    expect(h.sim.control.poolState(KINDS.nicPool2)?.ipConfigurations).toHaveLength(2);
    const stats = h.sim.control.stats(KINDS.scaleSet);
    expect(stats.puts).toBe(1);
    expect(stats.instancePuts).toBe(2);
    const outcomes = (await h.services.declarations.listForTarget(ref)).map((d) => [d.state, d.outcome.kind]);
    expect(outcomes.sort()).toEqual([
      ["absent", "applied"],
      ["present", "applied"],
    ]);
  });

  it("a move into an IP-based pool writes the new pool first, then takes the old one's addresses out", async () => {
    h = await start();
    const ref = target(KINDS.vm(1));
    await h.services.declarations.upsert(ref, declaration(KINDS.vm(1), KINDS.ipPool, "present"));
    await pass(KINDS.vm(1));
    const inPool = (p: string) =>
      (h!.sim.control.poolState(p)?.addresses ?? []).filter((a) => a.name?.startsWith("poolsync-"));
    expect(inPool(KINDS.ipPool)).toHaveLength(1);
    const neither: number[] = [];
    const sample = () => {
      if (inPool(KINDS.ipPool).length + inPool(KINDS.ipPool2).length === 0) neither.push(Date.now());
    };
    const off = h.sim.control.onEvent(sample);
    const timer = setInterval(sample, 1);
    const at = new Date(Date.now() + 1000).toISOString();
    await h.services.declarations.upsert(ref, {
      ...declaration(KINDS.vm(1), KINDS.ipPool2, "present"),
      declaredAt: at,
    });
    await h.services.declarations.upsert(ref, {
      ...declaration(KINDS.vm(1), KINDS.ipPool, "absent", { movedTo: KINDS.ipPool2 }),
      declaredAt: at,
    });
    await pass(KINDS.vm(1));
    clearInterval(timer);
    off();
    expect(neither).toEqual([]);
    expect(inPool(KINDS.ipPool)).toHaveLength(0);
    expect(inPool(KINDS.ipPool2)).toHaveLength(1);
  });
});
