import { describe, expect, it } from "vitest";
import { instanceNics, modelNics, poolsByIpConfig } from "../../sim/wire";
import { demoTargetSuite } from "../support/declareOn";
import { DEMO } from "../support/harness";
import { scaleSetRef } from "../support/refs";

/** One pass over a Uniform scale set: its model and instances written with If-Match (real SDKs, simulator, Azurite). */
describe("reconcileScaleSet", () => {
  const ref = scaleSetRef(DEMO.scaleSetId);
  const pool = DEMO.poolId.toLowerCase();
  const suite = demoTargetSuite(ref);
  const pass = () => suite.h.services.reconcile(ref, { reason: "test", attempt: 0 });
  const outcome = async () => (await suite.h.services.declarations.listForTarget(ref))[0]?.outcome;
  it("puts the pool on the model and on every instance and says applied; a second pass writes nothing", async () => {
    await suite.declare(DEMO.poolId);
    expect(await pass()).toMatchObject({ result: "applied", instancesWritten: 2 });
    suite.h.sim.control.settle();
    expect(poolsByIpConfig(modelNics(suite.h.sim.control.resource(DEMO.scaleSetId)!))).toEqual({ ipConfig0: [pool] });
    for (const inst of suite.h.sim.control.instances(DEMO.scaleSetId))
      expect(poolsByIpConfig(instanceNics(inst))).toEqual({ ipConfig0: [pool] });
    expect(await outcome()).toMatchObject({ kind: "applied" });
    expect(await pass()).toMatchObject({ result: "unchanged", armWrites: 0 });
  });

  it("keeps a concurrent writer's change: its 412 re-reads and writes on top", async () => {
    await suite.declare(DEMO.poolId);
    suite.h.sim.control.beforeNextWrite(
      DEMO.scaleSetId,
      (r) => void ((r as { tags?: unknown }).tags = { team: "other" }),
    );
    const report = await pass();
    expect(report.result).toBe("applied");
    expect(report.preconditionFailures).toBeGreaterThanOrEqual(1);
    const model = suite.h.sim.control.resource(DEMO.scaleSetId)! as { tags?: Record<string, string> };
    expect(model.tags).toEqual({ team: "other" });
    expect(poolsByIpConfig(modelNics(model as never))).toEqual({ ipConfig0: [pool] });
  });

  it("a scale set ARM no longer has records its declaration as waiting for it", async () => {
    await suite.declare(DEMO.poolId);
    suite.h.sim.control.delete(DEMO.scaleSetId);
    suite.h.sim.control.settle();
    expect(await pass()).toMatchObject({ result: "target-deleted" });
    expect(await outcome()).toMatchObject({ kind: "target-deleted" });
  });
});
