import { describe, expect, it } from "vitest";
import { WritePacer } from "../../src/pacing/writePacer";
import { budgetSpent, pace, type BudgetDeps } from "../../src/reconcile/ifMatchWrite";
import { budgetOwed, payAhead } from "../../src/reconcile/writeBudget";
import { instanceRefOf, scaleSetRef } from "../support/refs";

/**
 * A write's budget before it is sent (reconcile/writeBudget.ts): the pacer's answer, the come-back that names the
 * resource, and a pass sent back by that answer taking the token before it reads again, spent by its first write.
 */

const SUB = "00000000-1111-2222-3333-444444444444";
const SCALE_SET = `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/a`;
const NIC = `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Network/networkInterfaces/vm-0-nic`;
const POOL = `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Network/loadBalancers/lb/backendAddressPools/p`;

function depsAt(start = 1_000_000): BudgetDeps & { advance: (ms: number) => void } {
  let now = start;
  return {
    pacer: new WritePacer(() => now),
    clock: {
      now: () => now,
      sleep: (ms: number) => {
        now += ms;
        return Promise.resolve();
      },
    },
    config: { pacingMaxWaitMs: 5_000 },
    advance: (ms: number) => (now += ms),
  };
}

describe("budgetOwed: the resource whose spent budget sent a pass back", () => {
  it("finds the scale set, instance or NIC a pacing come-back named, once the runner requeued it", () => {
    const instance = `${SCALE_SET}/virtualMachines/7`;
    for (const [id, kind] of [
      [SCALE_SET, "scaleSet"],
      [instance, "instance"],
      [NIC, "nic"],
    ] as const)
      for (const shared of [false, true]) {
        const reason = `retry after: ${budgetSpent(id, 42_000, shared).reason}`;
        expect(budgetOwed(reason)).toMatchObject({ kind, id });
        // A merged trigger keeps it when another reason joined it.
        expect(budgetOwed(`event Microsoft.Compute/virtualMachineScaleSets/write; ${reason}`)?.id).toBe(id);
      }
  });

  it("finds nothing in any other reason, nor in a pool's budget (a pool write is paced as the whole subscription's)", () => {
    expect(budgetOwed("declare present /x")).toBeUndefined();
    expect(budgetOwed(`retry after: throttled: write budget of ${SCALE_SET} is spent`)).toBeUndefined();
    expect(budgetOwed(`pacing: write budget of ${SCALE_SET} is spent for 3 s`)).toBeUndefined();
    expect(budgetOwed(`retry after: ${budgetSpent(POOL, 1_000, false).reason}`)).toBeUndefined();
  });
});

describe("payAhead: the token taken before the pass reads", () => {
  it("comes back, taking nothing, while the budget is still spent", async () => {
    const deps = depsAt();
    const target = scaleSetRef(SCALE_SET);
    deps.pacer.throttled(target, 60_000, "429 for the test");
    const paid = await payAhead(target, deps);
    expect(paid).toMatchObject({ comeBack: { cause: "wait", reason: expect.stringContaining(SCALE_SET) } });
    expect(budgetOwed(`retry after: ${"comeBack" in paid ? paid.comeBack.reason : ""}`)?.id).toBe(SCALE_SET);
  });

  it("takes one token, and the pass's first write to that resource spends it without taking another", async () => {
    const deps = depsAt();
    const target = scaleSetRef(SCALE_SET);
    // CRP's bucket for one scale set holds 12 quick writes: 11 spent, one left.
    for (let i = 0; i < 11; i++) deps.pacer.take(target);
    const paid = await payAhead(target, deps);
    expect("credit" in paid).toBe(true);
    expect(deps.pacer.waitMs(target)).toBeGreaterThan(0);
    const credit = "credit" in paid ? paid.credit : undefined;
    // The first write goes at once on the credit; a second write of the pass waits for the refill like any other.
    expect(await pace(target, { ...deps, ...(credit ? { credit } : {}) })).toBeUndefined();
    expect(await pace(target, { ...deps, ...(credit ? { credit } : {}) })).toMatchObject({ cause: "wait" });
  });

  it("a credit names one resource: another instance's write is paced as usual", async () => {
    const deps = depsAt();
    const seven = instanceRefOf(`${SCALE_SET}/virtualMachines/7`);
    const paid = await payAhead(seven, deps);
    const credit = "credit" in paid ? paid.credit : new Set<string>();
    expect([...credit]).toEqual([seven.id.toLowerCase()]);
    const eight = instanceRefOf(`${SCALE_SET}/virtualMachines/8`);
    deps.pacer.throttled(eight, 60_000, "429 for the test");
    expect(await pace(eight, { ...deps, credit })).toMatchObject({ cause: "wait" });
    expect(credit.size).toBe(1);
  });
});
