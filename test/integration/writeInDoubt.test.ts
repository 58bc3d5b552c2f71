import { afterEach, describe, expect, it } from "vitest";
import { QUEUE_DECLARER, type Declaration } from "../../src/core/declarations";
import { modelNics, poolsByIpConfig } from "../../sim/wire";
import { startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";
import { poolId, scaleSetId, WIDE_SUBSCRIPTION, wideWorld } from "../../devkit/worlds";

/**
 * A write whose answer never came may still land (issue 41): the client gave up on it, ARM had it and applies it later.
 * While the resource keeps the ETag that write was conditional on, it can still land, so nothing about that resource is
 * reported finished: an `absent` judged in that window would be undone by our own `present` arriving late.
 */

const VMSS = scaleSetId(WIDE_SUBSCRIPTION, "wide", "vmss-0");
const ref = scaleSetRef(VMSS);
const POOL = poolId(WIDE_SUBSCRIPTION, "wide", "lb", "pool-0");
/** The client's timeout (ARM_TIMEOUT 1 s) and how long the simulator holds the write before applying it. */
const LANDS_AFTER_MS = 6_000;

const declaration = (state: "present" | "absent", id: string): Declaration => ({
  scaleSetId: VMSS,
  backendPoolId: POOL,
  ipConfiguration: "",
  state,
  declaredAt: new Date().toISOString(),
  requestId: id,
  declaredBy: QUEUE_DECLARER,
});

describe("a write whose answer never came", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it("holds back a finished absent until it can no longer land; then the absent is applied for real", async () => {
    h = await startHarness({
      cacheEnabled: true,
      sim: { seed: wideWorld({ scaleSets: 1, capacity: 1, pools: 1 }) },
      env: { POOLSYNC_SCOPES: `/subscriptions/${WIDE_SUBSCRIPTION}`, POOLSYNC_ARM_TIMEOUT_SECONDS: "1" },
    });
    const s = h.services;
    const c = h.sim.control;
    // The model PUT reaches ARM, which applies it only after the client has given up on it.
    c.injectFault({ method: "PUT", path: "virtualMachineScaleSets/vmss-0$", delayMs: LANDS_AFTER_MS });
    await s.declarations.upsert(ref, declaration("present", "d1"));
    const sent = Date.now();
    expect(await s.reconcile(ref, { reason: "declare present", attempt: 0 })).toMatchObject({ result: "requeued" });

    // Before it lands: a newer absent. ARM does not hold the pool (yet), but our own write may still bring it.
    await s.declarations.upsert(ref, declaration("absent", "d2"));
    const held = await s.reconcile(ref, { reason: "declare absent", attempt: 0 });
    // It had not landed when that pass judged the model (how long the passes take varies with the machine's load).
    expect(poolsByIpConfig(modelNics(c.resource(VMSS)!)).ipConfig0 ?? []).not.toContain(POOL.toLowerCase());
    expect(Date.now() - sent).toBeLessThan(LANDS_AFTER_MS);
    expect(held).toMatchObject({
      requeueAfterMs: expect.any(Number),
      reason: expect.stringContaining("may still land"),
    });
    expect((await s.declarations.listForTarget(ref))[0]?.outcome.kind).toBe("pending");

    // It lands: the PUT went out after the pass's reads, so poll for it rather than count from `sent`.
    const landed = () => (poolsByIpConfig(modelNics(c.resource(VMSS)!)).ipConfig0 ?? []).includes(POOL.toLowerCase());
    for (const until = Date.now() + LANDS_AFTER_MS + 10_000; !landed() && Date.now() < until;) {
      await new Promise((r) => setTimeout(r, 200));
      c.settle();
    }
    expect(poolsByIpConfig(modelNics(c.resource(VMSS)!)).ipConfig0).toContain(POOL.toLowerCase());

    // The ETag moved: the write can no longer land anywhere. The next pass removes the pool and finishes the absent.
    await s.reconcile(ref, { reason: "retry", attempt: 1 });
    c.settle();
    expect(poolsByIpConfig(modelNics(c.resource(VMSS)!)).ipConfig0).not.toContain(POOL.toLowerCase());
    expect((await s.declarations.listForTarget(ref))[0]).toMatchObject({
      requestId: "d2",
      outcome: { kind: "applied", appliedEverywhere: true },
    });
  });
});
