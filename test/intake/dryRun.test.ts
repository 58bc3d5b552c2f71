import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dryRunDeclaration, dryRunOf } from "../../src/intake/dryRun";
import { KEY_CALLER } from "../../src/intake/principal";
import { DEMO, startHarness, type Harness } from "../support/harness";
import { declareRequestOf } from "./requests";

/**
 * src/intake/dryRun.ts: `?dryRun=true` validates and plans a declaration exactly as a real one, against the app's own
 * plan (the simulator's ARM) and store preview (Azurite), and stores and enqueues nothing.
 */
interface Plan {
  declarations: number;
  writes: { kind: string; ipConfigurations: { gain: string[] }[] }[];
}

describe("dryRunOf", () => {
  it("reads true/1 as a dry run, false/0/absent as none, and anything else as invalid", () => {
    expect(["true", "1"].map(dryRunOf)).toEqual([true, true]);
    expect([null, "", "false", "0"].map(dryRunOf)).toEqual([false, false, false, false]);
    expect(["yes", "TRUE", "true,false"].map(dryRunOf)).toEqual(["invalid", "invalid", "invalid"]);
  });
});

describe("dryRunDeclaration", () => {
  let h: Harness;
  const T0 = Date.parse("2026-12-02T10:00:00Z");
  const body = { targetId: DEMO.scaleSetId, backendPoolId: DEMO.poolId, state: "present" };
  beforeAll(async () => {
    h = await startHarness({ env: { POOLSYNC_AUTH: "key" } });
  });
  afterAll(async () => {
    await h.stop();
  });
  const dryRun = (at: number) =>
    dryRunDeclaration(declareRequestOf(h, body), KEY_CALLER, {
      plan: h.services.plan,
      preview: h.services.previewDeclare,
      now: () => at,
    });

  it("answers what would be stored and the plan with it in place, and stores and enqueues nothing", async () => {
    const res = await dryRun(T0);
    expect(res.status).toBe(200);
    expect(res.jsonBody).toMatchObject({
      dryRun: true,
      wouldStore: { targetId: DEMO.scaleSetId, backendPoolId: DEMO.poolId, ipConfiguration: null, state: "present" },
    });
    // The plan counts the dry run's declaration, and would add the pool to the model and each instance.
    const plan = (res.jsonBody as { plan: Plan }).plan;
    expect(plan.declarations).toBe(1);
    expect(plan.writes.map((w) => [w.kind, w.ipConfigurations[0]?.gain])).toEqual([
      ["model", [DEMO.poolId.toLowerCase()]],
      ["instance", [DEMO.poolId.toLowerCase()]],
      ["instance", [DEMO.poolId.toLowerCase()]],
    ]);
    const ref = declareRequestOf(h, body).target;
    expect(await h.services.declarations.listForTarget(ref)).toEqual([]);
    expect(await h.queueDepth()).toBe(0);
  });

  it("is refused as the real declaration would be when a newer one is stored", async () => {
    const req = declareRequestOf(h, { ...body, state: "absent" });
    await h.services.declare({
      ref: req.target,
      declaration: {
        scaleSetId: req.target.id,
        backendPoolId: req.pool.id,
        ipConfiguration: "",
        state: "absent",
        declaredAt: new Date(T0).toISOString(),
        requestId: "req-stored",
        declaredBy: KEY_CALLER,
      },
      claimant: "req-stored",
      reason: "test",
    });
    const res = await dryRun(T0 - 1_000);
    expect(res.status).toBe(409);
    expect(res.jsonBody).toMatchObject({
      error: { code: "superseded", message: expect.stringContaining("req-stored") },
    });
  });
});
