import { afterEach, describe, expect, it } from "vitest";
import { QUEUE_DECLARER, type Declaration } from "../../src/core/declarations";
import { parseTargetId, type TargetRef } from "../../src/core/resourceIds";
import { KINDS, KINDS_SUBSCRIPTION, poolKindWorld } from "../../devkit/poolKindWorld";
import { startHarness, type Harness } from "../support/harness";

/**
 * A gateway write (issue 43) whose answer never came may still land, as an IP-based pool's may
 * (ipPoolWriteInDoubt.test.ts), and a gateway's addresses carry no name: the target's record keeps what the write sent,
 * and takes its claims once the pool shows exactly that list at another ETag (the write landed, nothing touched the
 * pool since). If the pool shows anything else, the address is kept as another writer's: never removed by poolsync.
 */

const VM = KINDS.vm(0);
const POOL = KINDS.addressGatewayPool;
const FOREIGN = "10.1.250.9";
const ref = ((): TargetRef => {
  const r = parseTargetId(VM);
  if (!r.ok) throw new Error(r.reason);
  return r.value;
})();
/** The client's timeout (ARM_TIMEOUT 1 s) and how long the simulator holds the write before applying it. */
const LANDS_AFTER_MS = 6_000;

const declaration = (state: "present" | "absent", id: string): Declaration => ({
  scaleSetId: VM,
  backendPoolId: POOL,
  ipConfiguration: "",
  state,
  declaredAt: new Date().toISOString(),
  requestId: id,
  declaredBy: QUEUE_DECLARER,
});

describe("a gateway write whose answer never came", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  async function writeLandsUnseen(): Promise<Harness> {
    h = await startHarness({
      sim: { seed: poolKindWorld() },
      env: {
        POOLSYNC_SCOPES: `/subscriptions/${KINDS_SUBSCRIPTION}`,
        POOLSYNC_ARM_TIMEOUT_SECONDS: "1",
        POOLSYNC_GATHER_MILLISECONDS: "0",
      },
    });
    const c = h.sim.control;
    const before = c.poolState(POOL)!.addresses.length;
    // The gateway PUT reaches ARM, which applies it only after the client has given up on it.
    c.injectFault({ method: "PUT", path: "applicationGateways/agw$", delayMs: LANDS_AFTER_MS, times: 1 });
    await h.services.declarations.upsert(ref, declaration("present", "d1"));
    expect(await h.services.reconcile(ref, { reason: "declare present", attempt: 0 })).toMatchObject({
      result: "requeued",
    });
    for (const until = Date.now() + 12_000; c.poolState(POOL)!.addresses.length === before && Date.now() < until;) {
      await new Promise((r) => setTimeout(r, 200));
      c.settle();
    }
    expect(c.poolState(POOL)!.addresses).toHaveLength(before + 1);
    return h;
  }

  const ips = (h: Harness) => h.sim.control.poolState(POOL)!.addresses.flatMap((a) => a.ipAddress ?? []);

  it("landed and untouched since: its address is claimed, and the absent takes it out", async () => {
    const h = await writeLandsUnseen();
    const ours = ips(h).filter((ip) => ip !== FOREIGN);
    expect(ours).toHaveLength(1);
    // The next pass finds its address in the pool as the write sent it: applied, without a second write.
    h.sim.control.resetStats();
    await h.services.reconcile(ref, { reason: "retry", attempt: 1 });
    h.sim.control.settle();
    expect(h.sim.control.stats(KINDS.gateway).networkPuts).toBe(0);
    expect((await h.services.declarations.listForTarget(ref))[0]?.outcome.kind).toBe("applied");

    await h.services.declarations.upsert(ref, declaration("absent", "d2"));
    await h.services.reconcile(ref, { reason: "declare absent", attempt: 0 });
    h.sim.control.settle();
    expect(ips(h)).toEqual([FOREIGN]);
    expect((await h.services.declarations.listForTarget(ref))[0]).toMatchObject({
      requestId: "d2",
      outcome: { kind: "applied" },
    });
  });

  it("another writer changed the pool after it landed: the address is not claimed, and the absent leaves it", async () => {
    const h = await writeLandsUnseen();
    const [ours] = ips(h).filter((ip) => ip !== FOREIGN);
    h.sim.control.writePoolAddresses(POOL, { add: [{ ipAddress: "10.1.250.77" }] });
    h.sim.control.settle();
    await h.services.declarations.upsert(ref, declaration("absent", "d2"));
    await h.services.reconcile(ref, { reason: "declare absent", attempt: 0 });
    h.sim.control.settle();
    // Whose it is cannot be told from the pool: kept, as another writer's would be (docs/api.md says to take it out).
    expect(ips(h)).toEqual([FOREIGN, ours, "10.1.250.77"]);
  });
});
