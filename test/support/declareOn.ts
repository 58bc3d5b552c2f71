import { QUEUE_DECLARER } from "../../src/core/declarations";
import { parseTargetId, type TargetRef } from "../../src/core/resourceIds";
import { afterAll, beforeAll, beforeEach } from "vitest";
import { startHarness, type Harness } from "./harness";

/** A target of a made-up or seeded ID; a bad one is a bug in the test. */
export function targetRef(id: string): TargetRef {
  const r = parseTargetId(id);
  if (!r.ok) throw new Error(`test bug: ${id} ${r.reason}`);
  return r.value;
}

/** Stores declarations of one target straight into the harness's store (as the intake would), each newer than the last. */
export function declareOn(h: Harness, ref: TargetRef) {
  let seq = 0;
  return (backendPoolId: string, state: "present" | "absent" = "present") =>
    h.services.declarations.upsert(ref, {
      scaleSetId: ref.id,
      backendPoolId,
      ipConfiguration: "",
      state,
      declaredAt: new Date(Date.now() + ++seq).toISOString(),
      requestId: `${ref.name}-${seq}-${Date.now()}`,
      declaredBy: QUEUE_DECLARER,
    });
}

/**
 * A suite on the simulator's demo world, one harness for its tests: before each, the world is seeded again and `ref`
 * has neither cached rows nor declarations. Its harness and `declare` are there once the suite started.
 */
export function demoTargetSuite(ref: TargetRef) {
  const suite = {} as { h: Harness; declare: ReturnType<typeof declareOn> };
  beforeAll(async () => {
    suite.h = await startHarness();
    suite.declare = declareOn(suite.h, ref);
  });
  afterAll(async () => {
    await suite.h.stop();
  });
  beforeEach(async () => {
    const { h } = suite;
    h.sim.control.reset({ seed: "demo" });
    await h.services.cache.evictScaleSet(ref);
    for (const d of await h.services.declarations.listForTarget(ref)) await h.services.declarations.remove(ref, d);
  });
  return suite;
}
