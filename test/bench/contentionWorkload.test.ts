import { describe, expect, it } from "vitest";
import { accountFor } from "../../bench/accounting";
import { contentionChanges } from "../../bench/workloads";
import { prng } from "../../bench/stats";
import { MAX_DECLARATIONS_PER_CALLER } from "../../src/core/declarationCap";

/**
 * The benchmark declares through the queue, one caller: a contention workload holding more present pools than one
 * caller may had poolsync refuse the excess at intake, and the report counted the refusals as lost updates.
 */
describe("the contention workload's changes", () => {
  it(`never hold more present pools than one caller may declare on a target (${MAX_DECLARATIONS_PER_CALLER})`, () => {
    const pools = Array.from({ length: 200 }, (_, i) => `pool-${i}`);
    for (const seed of [1000, 1001, 1002, 7]) {
      const changes = contentionChanges(
        { changes: 200, capacity: 3, arrivalGapMs: 3000, writers: 3, writerGapMs: 20_000, timeScale: 150 },
        "vmss-0",
        pools,
        prng(seed),
      );
      expect(changes).toHaveLength(200);
      const live = new Set<string>();
      let most = 0;
      for (const c of changes) {
        if (c.state === "present") live.add(c.poolId);
        else {
          // A remove only ever names a pool that is present.
          expect(live.has(c.poolId)).toBe(true);
          live.delete(c.poolId);
        }
        most = Math.max(most, live.size);
      }
      expect(most).toBeLessThan(MAX_DECLARATIONS_PER_CALLER);
      expect(changes.filter((c) => c.state === "absent").length).toBeGreaterThanOrEqual(60);
    }
  });
});

describe("the accounting of a change poolsync refused at intake", () => {
  it("says refused, with the reason the caller was given, not that the declaration is missing", async () => {
    const change = {
      id: 183,
      scaleSetId:
        "/subscriptions/00000000-0000-4000-8000-000000000183/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/vmss-0",
      poolId:
        "/subscriptions/00000000-0000-4000-8000-000000000183/resourceGroups/rg/providers/Microsoft.Network/loadBalancers/lb/backendAddressPools/pool-115",
      state: "present" as const,
    };
    const refusal = {
      scaleSetId: change.scaleSetId.toUpperCase(),
      backendPoolId: change.poolId,
      state: "present",
      reason: "caller queue holds 50 present declarations on this target (cap: 50)",
    };
    const [other] = await accountFor([{ ...change, id: 184, state: "absent" }], undefined, [], [refusal]);
    expect(other).toMatchObject({ outcome: "no declaration" });
    const [refused] = await accountFor([change], undefined, [], [refusal]);
    expect(refused).toMatchObject({ id: 183, outcome: "refused", reason: refusal.reason });
  });
});
