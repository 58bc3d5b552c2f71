import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KINDS } from "../../devkit/poolKindWorld";
import { memoryLogger } from "../../src/app/logger";
import type { NetworkPort } from "../../src/core/ports";
import { parseBackendPoolId, type BackendPoolRef } from "../../src/core/resourceIds";
import { CallStats } from "../../src/reconcile/callStats";
import { PoolKindsKnown } from "../../src/reconcile/poolKindsKnown";
import { manualClock, type Harness } from "../support/harness";
import { startKindsHarness } from "../support/kindsHarness";

/** Each pool's kind found out from the pool itself (the real SDK against the simulator), once per pool and TTL. */
const TTL_MS = 600_000;
const poolRef = (id: string): BackendPoolRef => {
  const r = parseBackendPoolId(id);
  if (!r.ok) throw new Error(`test bug: ${id} ${r.reason}`);
  return r.value;
};

describe("PoolKindsKnown", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startKindsHarness();
  });
  afterAll(async () => {
    await h.stop();
  });

  /** A fresh memory of kinds, the network port counted (one read is one getBackendPool), on a clock the test moves. */
  function known() {
    const clock = manualClock();
    const stats = new CallStats();
    const network: NetworkPort = stats.wrapNetwork(h.services.network);
    const kinds = new PoolKindsKnown(clock.now, TTL_MS);
    const log = memoryLogger();
    return {
      clock,
      kinds,
      log,
      ask: (id: string) => kinds.ipBased(poolRef(id), network, log),
      reads: () => stats.byCall["getBackendPool"] ?? 0,
    };
  }

  it("answers what each pool says: syncMode Manual or IP addresses is IP-based, an empty pool says nothing, a NAT pool is never read", async () => {
    const k = known();
    expect(await k.ask(KINDS.ipPool)).toBe(true);
    expect(await k.ask(KINDS.classicIpPool)).toBe(true);
    expect(await k.ask(KINDS.nicPool)).toBeUndefined();
    expect(await k.ask(KINDS.natPool)).toBe(false);
    expect(k.reads()).toBe(3);
  });

  it("reads a pool once per TTL, and once for askers that come together", async () => {
    const k = known();
    expect(await Promise.all([k.ask(KINDS.ipPool), k.ask(KINDS.ipPool)])).toEqual([true, true]);
    expect(k.reads()).toBe(1);
    k.clock.advance(TTL_MS - 1);
    await k.ask(KINDS.ipPool);
    expect(k.reads()).toBe(1);
    k.clock.advance(1);
    await k.ask(KINDS.ipPool);
    expect(k.reads()).toBe(2);
  });

  it("reads the kinds of a pass's pools several at a time, each distinct pool once", async () => {
    const k = known();
    let inFlight = 0;
    let most = 0;
    const network: Pick<NetworkPort, "getBackendPool"> = {
      getBackendPool: async (ref) => {
        most = Math.max(most, ++inFlight);
        try {
          return await h.services.network.getBackendPool(ref);
        } finally {
          inFlight--;
        }
      },
    };
    const ids = [KINDS.ipPool, KINDS.ipPool2, KINDS.classicIpPool, KINDS.nicPool, KINDS.nicPool2, KINDS.ipPool];
    const kinds = await k.kinds.ipBasedOfEach(ids.map(poolRef), network, k.log);
    expect(Object.fromEntries([...kinds].map(([key, v]) => [key.split("/").pop(), v]))).toEqual({
      ips: true,
      "ips-2": true,
      "ips-classic": true,
      nics: undefined,
      "nics-2": undefined,
    });
    // Five distinct pools, all asked before the first answer (one after the other, a burst's fifty took ten seconds).
    expect(most).toBe(5);
  });

  it("a read the role does not grant (403) is logged and not asked again within the TTL; another failure is", async () => {
    const k = known();
    h.sim.control.injectFault({ method: "GET", path: "/loadBalancers/lb", status: 403 });
    expect(await k.ask(KINDS.ipPool2)).toBeUndefined();
    expect(k.log.lines).toEqual([
      expect.objectContaining({ event: "pool.kind-unknown", poolId: poolRef(KINDS.ipPool2).id }),
    ]);
    expect(await k.ask(KINDS.ipPool2)).toBeUndefined();
    expect(k.reads()).toBe(1);

    h.sim.control.injectFault({ method: "GET", path: "/loadBalancers/lb", status: 404 });
    expect(await k.ask(KINDS.ipPool)).toBeUndefined();
    expect(await k.ask(KINDS.ipPool)).toBe(true);
    expect(k.reads()).toBe(3);
  });
});
