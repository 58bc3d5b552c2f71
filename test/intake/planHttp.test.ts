import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Declaration } from "../../src/core/declarations";
import { handlePlan } from "../../src/intake/planHttp";
import { KEY_CALLER } from "../../src/intake/principal";
import { DEMO, startHarness, type Harness } from "../support/harness";
import { API, errorOf, request, targetRefOf } from "./requests";

/**
 * src/intake/planHttp.ts: GET /api/plan?targetId= answers what a pass over the target would write now, reading ARM
 * (the simulator) and writing nothing; ARM's trouble is told as ARM's.
 */
const GONE = DEMO.scaleSetId.replace(/etag-k8s-mp-0$/, "never-created");

describe("handlePlan", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ env: { POOLSYNC_AUTH: "key" } });
    for (const id of [DEMO.scaleSetId, GONE]) {
      const declaration: Declaration = {
        scaleSetId: id,
        backendPoolId: DEMO.poolId,
        ipConfiguration: "",
        state: "present",
        declaredAt: new Date().toISOString(),
        requestId: `req-${id.length}`,
        declaredBy: KEY_CALLER,
      };
      await h.services.declare({ ref: targetRefOf(id), declaration, claimant: declaration.requestId, reason: "test" });
    }
  });
  afterAll(async () => {
    await h.stop();
  });
  const plan = (id: string) => handlePlan(request("GET", `${API}/plan?targetId=${encodeURIComponent(id)}`), h.services);

  it("answers the writes a pass would make for the stored declarations, and makes none", async () => {
    const writesBefore = h.sim.control.operations().length;
    const res = await plan(DEMO.scaleSetId);
    expect(res.status).toBe(200);
    const body = res.jsonBody as { targetId: string; declarations: number; writes: { kind: string }[] };
    expect(body).toMatchObject({ targetId: DEMO.scaleSetId, declarations: 1 });
    expect(body.writes.map((w) => w.kind)).toEqual(["model", "instance", "instance"]);
    expect(h.sim.control.operations().length).toBe(writesBefore);
  });

  it("answers a target ARM does not know 502, saying what a pass would record, with ARM's status", async () => {
    const res = await plan(GONE);
    expect(res.status).toBe(502);
    expect(res.jsonBody).toMatchObject({ error: { code: "arm_error", arm: { status: 404 } } });
    expect(errorOf(res).message).toContain("a reconcile would record its declarations target-deleted");
    expect(h.logs.lines.some((l) => l.event === "plan.arm-error" && l.targetId === GONE)).toBe(true);
  });

  it("says so when the host cannot plan, rather than answering an empty plan", async () => {
    const res = await handlePlan(request("GET", `${API}/plan?targetId=${encodeURIComponent(DEMO.scaleSetId)}`), {
      ...h.services,
      plan: undefined,
    });
    expect([res.status, errorOf(res).message]).toEqual([503, "planning is not available on this host"]);
  });
});
