import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseTargetId } from "../../src/core/resourceIds";
import { handleMove, unknownAction } from "../../src/intake/moveHttp";
import { DEMO, startHarness, type Harness } from "../support/harness";
import { API, errorOf, putJson, request } from "./requests";

/**
 * src/intake/moveHttp.ts: PUT /api/memberships/move stores a target's leaving one pool and joining another as two
 * declarations (to present, from absent as the other half of the move), or refuses the move naming the field.
 */
const LB = DEMO.poolId.replace(/\/backendAddressPools\/.*$/, "");
const V6_POOL = `${LB}/backendAddressPools/etag-k8s-v6`;
const move = { targetId: DEMO.scaleSetId, from: DEMO.poolId, to: V6_POOL };

describe("handleMove", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ env: { POOLSYNC_AUTH: "key" } });
  });
  afterAll(async () => {
    await h.stop();
  });
  const put = (body: unknown) => handleMove(putJson(`${API}/memberships/move`, body), h.services);

  it("stores the move as to present and from absent, moved to the new pool, and answers both request ids", async () => {
    const res = await put(move);
    expect(res.status).toBe(202);
    const answer = res.jsonBody as { requestIds: { to: string; from: string } };
    expect(answer).toMatchObject({ targetId: DEMO.scaleSetId, from: DEMO.poolId, to: V6_POOL, status: "accepted" });
    const ref = parseTargetId(DEMO.scaleSetId);
    if (!ref.ok) throw new Error(ref.reason);
    const stored = await h.services.declarations.listForTarget(ref.value);
    const byPool = Object.fromEntries(stored.map((d) => [d.backendPoolId, d]));
    expect(byPool[V6_POOL]).toMatchObject({ state: "present", requestId: answer.requestIds.to });
    expect(byPool[DEMO.poolId]).toMatchObject({ state: "absent", movedTo: V6_POOL, requestId: answer.requestIds.from });
  });

  it("refuses a move to the pool it leaves, or between pools of two kinds, naming to", async () => {
    const same = await put({ ...move, to: DEMO.poolId.toUpperCase() });
    expect([same.status, errorOf(same)]).toEqual([
      400,
      { code: "invalid_field", message: "to: is the pool it moves from", field: "to" },
    ]);
    const nat = await put({ ...move, to: `${LB}/inboundNatPools/ssh` });
    expect([nat.status, errorOf(nat).field, errorOf(nat).message]).toEqual([
      400,
      "to",
      "to: a move goes between two pools of one kind (one ip configuration field)",
    ]);
  });

  it("refuses a pool outside POOLSYNC_SCOPES 403, naming which end, and an unknown field 400", async () => {
    const elsewhere = V6_POOL.replace(DEMO.subscription, "99999999-2222-3333-4444-555555555555");
    const res = await put({ ...move, to: elsewhere });
    expect([res.status, errorOf(res).code, errorOf(res).field]).toEqual([403, "out_of_scope", "to"]);
    const extra = await put({ ...move, state: "present" });
    expect([extra.status, errorOf(extra).code, errorOf(extra).field]).toEqual([400, "unknown_field", "state"]);
  });

  it("takes only PUT, and answers any other action under memberships/ as no such route", async () => {
    const get = await handleMove(request("GET", `${API}/memberships/move`), h.services);
    expect([get.status, (get.headers as Record<string, string>).allow]).toEqual([405, "PUT"]);
    const other = unknownAction("swap");
    expect([other.status, errorOf(other).message]).toEqual([
      404,
      "memberships/swap: no such route (PUT /api/memberships/move moves)",
    ]);
  });
});
