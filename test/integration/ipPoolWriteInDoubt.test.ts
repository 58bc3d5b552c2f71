import { afterEach, describe, expect, it } from "vitest";
import { QUEUE_DECLARER, type Declaration } from "../../src/core/declarations";
import { ADDRESS_NAME_MARK } from "../../src/core/ipPoolAddresses";
import { parseTargetId, type TargetRef } from "../../src/core/resourceIds";
import { KINDS, KINDS_SUBSCRIPTION, poolKindWorld } from "../../devkit/poolKindWorld";
import { startHarness, type Harness } from "../support/harness";

/**
 * A write of an IP-based pool (issue 43) whose answer never came may still land, as a scale set's may
 * (writeInDoubt.test.ts): while the load balancer keeps the ETag that write was conditional on, an `absent` judged on the
 * pool is not reported finished, or our own late `present` would undo it.
 */

const VM = KINDS.vm(0);
const ref = ((): TargetRef => {
  const r = parseTargetId(VM);
  if (!r.ok) throw new Error(r.reason);
  return r.value;
})();
/** The client's timeout (ARM_TIMEOUT 1 s) and how long the simulator holds the write before applying it. */
const LANDS_AFTER_MS = 6_000;

const declaration = (state: "present" | "absent", id: string): Declaration => ({
  scaleSetId: VM,
  backendPoolId: KINDS.ipPool,
  ipConfiguration: "",
  state,
  declaredAt: new Date().toISOString(),
  requestId: id,
  declaredBy: QUEUE_DECLARER,
});

describe("an IP-based pool write whose answer never came", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it("holds back a finished absent until it can no longer land; then the absent is applied for real", async () => {
    h = await startHarness({
      sim: { seed: poolKindWorld() },
      env: {
        POOLSYNC_SCOPES: `/subscriptions/${KINDS_SUBSCRIPTION}`,
        POOLSYNC_ARM_TIMEOUT_SECONDS: "1",
        POOLSYNC_GATHER_MILLISECONDS: "0",
      },
    });
    const s = h.services;
    const c = h.sim.control;
    const ours = () =>
      (c.poolState(KINDS.ipPool)?.addresses ?? []).filter((a) => a.name?.startsWith(ADDRESS_NAME_MARK));
    // The pool PUT reaches ARM, which applies it only after the client has given up on it.
    c.injectFault({ method: "PUT", path: "backendAddressPools/ips$", delayMs: LANDS_AFTER_MS, times: 1 });
    await s.declarations.upsert(ref, declaration("present", "d1"));
    const sent = Date.now();
    expect(await s.reconcile(ref, { reason: "declare present", attempt: 0 })).toMatchObject({ result: "requeued" });

    // Before it lands: a newer absent. The pool does not list the address (yet), but our own write may still bring it.
    await s.declarations.upsert(ref, declaration("absent", "d2"));
    const held = await s.reconcile(ref, { reason: "declare absent", attempt: 0 });
    // It had not landed when that pass judged the pool (the time the passes take varies with the machine's load).
    expect(ours()).toEqual([]);
    expect(Date.now() - sent).toBeLessThan(LANDS_AFTER_MS);
    expect(held).toMatchObject({
      requeueAfterMs: expect.any(Number),
      reason: expect.stringContaining("may still land"),
    });
    expect((await s.declarations.listForTarget(ref))[0]?.outcome.kind).toBe("pending");

    // It lands (the PUT went out after the pass's reads: poll for it rather than count from `sent`).
    for (const until = Date.now() + 10_000; ours().length === 0 && Date.now() < until;) {
      await new Promise((r) => setTimeout(r, 200));
      c.settle();
    }
    expect(ours()).toHaveLength(1);

    // The ETag moved: the write can no longer land. The next pass takes the address out and finishes the absent.
    await s.reconcile(ref, { reason: "retry", attempt: 1 });
    c.settle();
    expect(ours()).toEqual([]);
    expect((await s.declarations.listForTarget(ref))[0]).toMatchObject({
      requestId: "d2",
      outcome: { kind: "applied" },
    });
  });
});
