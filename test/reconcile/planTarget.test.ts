import { describe, expect, it } from "vitest";
import { DEMO, startHarness } from "../support/harness";
import { declareOn, demoTargetSuite } from "../support/declareOn";
import { scaleSetRef } from "../support/refs";

/** What a pass would write now, reading ARM as the pass would and writing nothing (the real SDKs, sim, Azurite). */
describe("planTarget", () => {
  const ref = scaleSetRef(DEMO.scaleSetId);
  const suite = demoTargetSuite(ref);
  const etag = () => suite.h.sim.control.resource(DEMO.scaleSetId)?.etag;
  it("names the model's write on its current ETag for a pending declaration, and writes nothing", async () => {
    await suite.declare(DEMO.poolId);
    const before = etag();
    const plan = await suite.h.services.plan(ref);
    expect(plan).toMatchObject({ targetId: ref.id, declarations: 1, skipped: [], unplaceable: [] });
    expect(plan.writes[0]).toMatchObject({ kind: "model", ifMatch: before });
    expect(etag()).toBe(before);
    expect((await suite.h.services.declarations.listForTarget(ref))[0]!.outcome.kind).toBe("pending");
  });

  it("plans no write once the pass has applied the declaration", async () => {
    await suite.declare(DEMO.poolId);
    expect(await suite.h.services.reconcile(ref, { reason: "test", attempt: 0 })).toMatchObject({ result: "applied" });
    suite.h.sim.control.settle();
    const plan = await suite.h.services.plan(ref);
    expect(plan.writes.filter((w) => w.kind === "model")).toEqual([]);
  });

  it("skips a declaration the pass would refuse, with its reason", async () => {
    const outside = DEMO.poolId.replace(DEMO.subscription, "00000000-0000-0000-0000-0000000000bf");
    await suite.declare(outside);
    const plan = await suite.h.services.plan(ref);
    expect(plan.writes).toEqual([]);
    expect(plan.skipped).toEqual([
      expect.objectContaining({ backendPoolId: outside, reason: "backend pool is outside POOLSYNC_SCOPES" }),
    ]);
  });
});

describe("planTarget's read bound", () => {
  it("stops at POOLSYNC_PLAN_MAX_READS and says what it did not read", async () => {
    const h = await startHarness({ env: { POOLSYNC_PLAN_MAX_READS: "1" } });
    try {
      const ref = scaleSetRef(DEMO.scaleSetId);
      await declareOn(h, ref)(DEMO.poolId);
      const plan = await h.services.plan(ref);
      expect(plan.reads).toMatchObject({ made: 1, limit: 1, cutShort: true, notReadCount: 1 });
    } finally {
      await h.stop();
    }
  });
});
