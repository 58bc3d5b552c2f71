import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { instanceNics, modelNics, poolsByIpConfig } from "../../sim/wire";
import { declareOn } from "../support/declareOn";
import { DEMO, startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";

/** One pass over a Uniform scale set: its model and instances written with If-Match (real SDKs, simulator, Azurite). */
describe("reconcileScaleSet", () => {
  const ref = scaleSetRef(DEMO.scaleSetId);
  const pool = DEMO.poolId.toLowerCase();
  let h: Harness;
  let declare: ReturnType<typeof declareOn>;
  const pass = () => h.services.reconcile(ref, { reason: "test", attempt: 0 });
  const outcome = async () => (await h.services.declarations.listForTarget(ref))[0]?.outcome;
  beforeAll(async () => {
    h = await startHarness();
    declare = declareOn(h, ref);
  });
  afterAll(async () => {
    await h.stop();
  });
  beforeEach(async () => {
    h.sim.control.reset({ seed: "demo" });
    await h.services.cache.evictScaleSet(ref);
    for (const d of await h.services.declarations.listForTarget(ref)) await h.services.declarations.remove(ref, d);
  });

  it("puts the pool on the model and on every instance and says applied; a second pass writes nothing", async () => {
    await declare(DEMO.poolId);
    expect(await pass()).toMatchObject({ result: "applied", instancesWritten: 2 });
    h.sim.control.settle();
    expect(poolsByIpConfig(modelNics(h.sim.control.resource(DEMO.scaleSetId)!))).toEqual({ ipConfig0: [pool] });
    for (const inst of h.sim.control.instances(DEMO.scaleSetId))
      expect(poolsByIpConfig(instanceNics(inst))).toEqual({ ipConfig0: [pool] });
    expect(await outcome()).toMatchObject({ kind: "applied" });
    expect(await pass()).toMatchObject({ result: "unchanged", armWrites: 0 });
  });

  it("keeps a concurrent writer's change: its 412 re-reads and writes on top", async () => {
    await declare(DEMO.poolId);
    h.sim.control.beforeNextWrite(DEMO.scaleSetId, (r) => void ((r as { tags?: unknown }).tags = { team: "other" }));
    const report = await pass();
    expect(report.result).toBe("applied");
    expect(report.preconditionFailures).toBeGreaterThanOrEqual(1);
    const model = h.sim.control.resource(DEMO.scaleSetId)! as { tags?: Record<string, string> };
    expect(model.tags).toEqual({ team: "other" });
    expect(poolsByIpConfig(modelNics(model as never))).toEqual({ ipConfig0: [pool] });
  });

  it("a scale set ARM no longer has records its declaration as waiting for it", async () => {
    await declare(DEMO.poolId);
    h.sim.control.delete(DEMO.scaleSetId);
    h.sim.control.settle();
    expect(await pass()).toMatchObject({ result: "target-deleted" });
    expect(await outcome()).toMatchObject({ kind: "target-deleted" });
  });
});
