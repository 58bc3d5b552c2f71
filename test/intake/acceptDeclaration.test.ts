import { RestError, type PipelinePolicy } from "@azure/core-rest-pipeline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { acceptDeclaration } from "../../src/intake/acceptDeclaration";
import { KEY_CALLER } from "../../src/intake/principal";
import { DEMO, startHarness, type Harness } from "../support/harness";
import { declareRequestOf } from "./requests";

/**
 * src/intake/acceptDeclaration.ts: a declaration is accepted once its row is stored (the durable intent), refused when
 * a newer one of its key is stored, and not accepted at all when storage refuses the write. Through the app's own
 * declare (Azurite, the simulator's world).
 */
let refuseWrites = false;
/** Storage refusing the intake's writes as a rotated account key would: 403, which the SDK does not retry. */
const refusing: PipelinePolicy = {
  name: "refuseTableWrites",
  async sendRequest(req, next) {
    if (refuseWrites && req.method !== "GET")
      throw new RestError("This request is not authorized to perform this operation.", { statusCode: 403 });
    return next(req);
  },
};

describe("acceptDeclaration", () => {
  let h: Harness;
  const T0 = Date.parse("2026-12-02T10:00:00Z");
  beforeAll(async () => {
    h = await startHarness({ env: { POOLSYNC_AUTH: "key" }, storagePolicies: [refusing] });
  });
  afterAll(async () => {
    await h.stop();
  });
  const storedRequests = async () =>
    (await h.services.declarations.listForTarget(ref())).map((d) => [d.requestId, d.state, d.declaredAt]);
  const ref = () =>
    declareRequestOf(h, { targetId: DEMO.scaleSetId, backendPoolId: DEMO.poolId, state: "present" }).target;
  const accept = (state: "present" | "absent", at: number, requestId: string) =>
    acceptDeclaration(
      declareRequestOf(h, { targetId: DEMO.scaleSetId, backendPoolId: DEMO.poolId, state }),
      KEY_CALLER,
      { declare: h.services.declare, log: h.logs, now: () => at, newRequestId: () => requestId },
    );

  it("stores the declaration, answers it accepted with its request id, and schedules its pass", async () => {
    const r = await accept("present", T0, "req-first");
    expect(r.ok && r.value).toMatchObject({ requestId: "req-first", status: "accepted", queued: true });
    expect(r.ok && [r.value.targetId, r.value.backendPoolId, r.value.ipConfiguration]).toEqual([
      DEMO.scaleSetId,
      DEMO.poolId,
      null,
    ]);
    expect(r.ok && r.value.declaredBy).toEqual(KEY_CALLER);
    expect(await storedRequests()).toEqual([["req-first", "present", new Date(T0).toISOString()]]);
    expect(await h.queueDepth()).toBeGreaterThanOrEqual(1);
  });

  it("refuses a declaration older than the one stored, 409 naming the stored one", async () => {
    const r = await accept("absent", T0 - 60_000, "req-late");
    expect(r.ok).toBe(false);
    expect(!r.ok && r.problem).toMatchObject({ status: 409, code: "superseded" });
    expect(!r.ok && r.problem.message).toContain(`declared at ${new Date(T0).toISOString()}, request req-first`);
  });

  it("accepts nothing when storage refuses the write: 503, retry after 5 s, and the reason in the log only", async () => {
    refuseWrites = true;
    try {
      const r = await accept("absent", T0 + 60_000, "req-refused");
      expect(!r.ok && r.problem).toMatchObject({
        status: 503,
        code: "storage_unavailable",
        headers: { "retry-after": "5" },
        message: "the declaration could not be stored; nothing was accepted, try again",
      });
      expect(h.logs.lines.find((l) => l.event === "intake.store-failed")?.error).toMatch(/not authorized/);
    } finally {
      refuseWrites = false;
    }
    expect((await storedRequests()).map(([id]) => id)).toEqual(["req-first"]);
  });
});
