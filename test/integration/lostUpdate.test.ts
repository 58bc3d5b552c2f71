import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEMO, startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";
import { addIpConfig, instanceNics, modelNics, poolsByIpConfig } from "../../sim/wire";

const pool = DEMO.poolId.toLowerCase();
const declare = (state: "present" | "absent", requestId?: string) => ({
  v: 1,
  kind: "declare",
  scaleSetId: DEMO.scaleSetId,
  backendPoolId: DEMO.poolId,
  state,
  ...(requestId ? { requestId } : {}),
});

describe("applyBackendPools against the simulator: no lost update", () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness();
  });
  afterEach(async () => {
    await h.stop();
  });

  it("keeps another writer's ip configuration that lands between our read and our write", async () => {
    const c = h.sim.control;
    const instance0 = `${DEMO.scaleSetId}/virtualMachines/0`;
    c.beforeNextWrite(DEMO.scaleSetId, addIpConfig("ipConfig1", DEMO.subnetId));
    c.beforeNextWrite(instance0, addIpConfig("ipConfig1", DEMO.subnetId));

    await h.send(declare("present"));
    await h.drain();

    const model = poolsByIpConfig(modelNics(c.resource(DEMO.scaleSetId)!));
    expect(model).toEqual({ ipConfig0: [pool], ipConfig1: [] });
    const instances = c.instances(DEMO.scaleSetId).map((vm) => poolsByIpConfig(instanceNics(vm)));
    expect(instances).toEqual([{ ipConfig0: [pool], ipConfig1: [] }, { ipConfig0: [pool] }]);
    // One 412 on the model, one on instance 0; each followed by exactly one re-read and one successful retry.
    // The cache starts empty, so the counts are the same with it on or off.
    expect(c.stats()).toMatchObject({
      status412: 2,
      gets: 2,
      puts: 2,
      instanceLists: 1,
      instanceGets: 1,
      instancePuts: 3,
      status429: 0,
    });
    expect(c.stats(instance0)).toMatchObject({ status412: 1, instancePuts: 2, instanceGets: 1 });
    expect(c.stats(`${DEMO.scaleSetId}/virtualMachines/1`)).toMatchObject({ status412: 0, instancePuts: 1 });
    expect(c.poolMembers(DEMO.poolId)).toHaveLength(2);
    // The status view's record of it.
    expect(await h.services.problems.list()).toEqual([
      expect.objectContaining({
        scaleSetId: DEMO.scaleSetId,
        result: "applied",
        preconditionFailures: 2,
        throttles: 0,
      }),
    ]);
  });

  it("removes the pool everywhere and keeps the other writer's ip configuration", async () => {
    const c = h.sim.control;
    await h.send(declare("present"));
    await h.drain();
    c.beforeNextWrite(DEMO.scaleSetId, addIpConfig("ipConfig1", DEMO.subnetId));
    c.beforeNextWrite(`${DEMO.scaleSetId}/virtualMachines/1`, addIpConfig("ipConfig1", DEMO.subnetId));
    c.resetStats();

    await h.send(declare("absent"));
    await h.drain();

    expect(poolsByIpConfig(modelNics(c.resource(DEMO.scaleSetId)!))).toEqual({ ipConfig0: [], ipConfig1: [] });
    expect(c.instances(DEMO.scaleSetId).map((vm) => poolsByIpConfig(instanceNics(vm)))).toEqual([
      { ipConfig0: [] },
      { ipConfig0: [], ipConfig1: [] },
    ]);
    expect(c.stats().status412).toBe(2);
    expect(c.poolMembers(DEMO.poolId)).toEqual([]);
    const [decl] = await h.services.declarations.listForTarget(scaleSetRef(DEMO.scaleSetId));
    expect(decl?.outcome).toMatchObject({ kind: "applied", appliedEverywhere: true });
  });

  it("writes nothing for a declaration that already holds, and nothing more for a duplicate delivery", async () => {
    const c = h.sim.control;
    await h.send(declare("present", "req-1"));
    await h.drain();
    c.resetStats();

    await h.send(declare("present", "req-1")); // the same message again
    await h.send(declare("present", "req-2")); // the same intent, newly declared
    await h.drain();
    const s = c.stats();
    expect(s.puts + s.patches + s.instancePuts).toBe(0);
  });
});
