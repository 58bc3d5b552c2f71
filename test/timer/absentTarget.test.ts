import { afterEach, describe, expect, it } from "vitest";
import { NOT_FOUND_FIRST_WAIT_MS, QUEUE_DECLARER } from "../../src/core/declarations";
import { DEMO_SUBSCRIPTION } from "../../sim/seed";
import { eventGridEvent } from "../support/armEventSamples";
import { manualClock, startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";

/**
 * Issue 26: a declaration of a scale set that does not exist was read from ARM by every timer run, forever. ARM's 404
 * now gives it a growing wait, kept on the declaration (every host sees it); an event for the target does not wait.
 */

const RG = `/subscriptions/${DEMO_SUBSCRIPTION}/resourceGroups/later`;
const SCALE_SET = `${RG}/providers/Microsoft.Compute/virtualMachineScaleSets/later-0`;
const POOL = `${RG}/providers/Microsoft.Network/loadBalancers/later-lb/backendAddressPools/pool-0`;
const ref = scaleSetRef(SCALE_SET);
const TIMER_PERIOD_MS = 5 * 60_000;

const LATER_SEED = {
  subscriptions: [
    {
      id: DEMO_SUBSCRIPTION,
      resourceGroups: [
        {
          name: "later",
          location: "westeurope",
          virtualNetworks: [
            {
              name: "vnet",
              addressPrefixes: ["10.0.0.0/8"],
              subnets: [{ name: "nodes", addressPrefix: "10.3.0.0/16" }],
            },
          ],
          loadBalancers: [{ name: "later-lb", backendPools: ["pool-0"] }],
          scaleSets: [
            {
              name: "later-0",
              capacity: 2,
              nics: [
                {
                  name: "nic-0",
                  primary: true,
                  ipConfigurations: [{ name: "ipConfig0", primary: true, subnet: "vnet/nodes" }],
                },
              ],
            },
          ],
        },
      ],
    },
  ],
};

describe("a declared scale set ARM answers 404 for", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it("is read less and less often by the timer, says when it looks next, and is reconciled at once on its event", async () => {
    const clock = manualClock(Date.now());
    h = await startHarness({ clock, cacheEnabled: true, env: { POOLSYNC_EVENT_DEBOUNCE_SECONDS: "0" } });
    await h.services.declarations.upsert(ref, {
      scaleSetId: SCALE_SET,
      backendPoolId: POOL,
      ipConfiguration: "",
      state: "present",
      declaredAt: new Date(clock.now()).toISOString(),
      requestId: "r1",
      declaredBy: QUEUE_DECLARER,
    });
    expect(await h.services.reconcile(ref, { reason: "declared", attempt: 0 })).toMatchObject({
      result: "target-deleted",
    });
    const [first] = await h.services.declarations.listForTarget(ref);
    expect(first?.outcome).toMatchObject({
      kind: "target-deleted",
      retryAt: new Date(clock.now() + NOT_FOUND_FIRST_WAIT_MS).toISOString(),
    });
    expect(first?.outcome.reason).toMatch(/waiting for the target to exist: the timer looks again at \S+Z$/);

    // Two hours of timer runs, every 5 minutes: ARM reads of the absent scale set, per run.
    const reads: number[] = [];
    for (let run = 0; run < 24; run++) {
      clock.advance(TIMER_PERIOD_MS);
      const before = h.sim.control.stats().requests;
      await h.services.reconcileStale();
      reads.push(h.sim.control.stats().requests - before);
    }
    const firstHour = reads.slice(0, 12).reduce((a, b) => a + b, 0);
    const secondHour = reads.slice(12).reduce((a, b) => a + b, 0);
    // Waits of 5, 10, 20, 40, 80 minutes: looks at 5, 15, 35, 75 minutes (every run read it before).
    expect(reads.filter((n) => n > 0)).toHaveLength(4);
    expect(secondHour).toBeLessThan(firstHour);
    const [waiting] = await h.services.declarations.listForTarget(ref);
    expect(Date.parse(waiting!.outcome.retryAt!) - Date.parse(waiting!.outcome.at)).toBe(16 * NOT_FOUND_FIRST_WAIT_MS);

    // The scale set is created; its event arrives: the reconcile runs now, not at the end of the wait.
    h.sim.control.seed(LATER_SEED);
    const outcome = await h.services.handleResourceEvent(
      eventGridEvent({
        id: "created",
        resourceUri: SCALE_SET,
        operationName: "Microsoft.Compute/virtualMachineScaleSets/write",
      }),
    );
    expect(outcome).toBe("invalidated+reconcile");
    await h.drainUntilEmpty(30_000);
    const [applied] = await h.services.declarations.listForTarget(ref);
    expect(applied?.outcome.kind).toBe("applied");
  });

  it("a new declaration of the target starts again from the first wait", async () => {
    const clock = manualClock(Date.now());
    h = await startHarness({ clock, cacheEnabled: true });
    const declare = async (requestId: string) => {
      await h!.services.declarations.upsert(ref, {
        scaleSetId: SCALE_SET,
        backendPoolId: POOL,
        ipConfiguration: "",
        state: "present",
        declaredAt: new Date(clock.now()).toISOString(),
        requestId,
        declaredBy: QUEUE_DECLARER,
      });
      await h!.services.reconcile(ref, { reason: "declared", attempt: 0 });
      const [d] = await h!.services.declarations.listForTarget(ref);
      return Date.parse(d!.outcome.retryAt!) - clock.now();
    };
    expect(await declare("r1")).toBe(NOT_FOUND_FIRST_WAIT_MS);
    clock.advance(NOT_FOUND_FIRST_WAIT_MS);
    await h.services.reconcileStale(); // looks, 404 again: the wait doubles
    const [d] = await h.services.declarations.listForTarget(ref);
    expect(Date.parse(d!.outcome.retryAt!) - clock.now()).toBe(2 * NOT_FOUND_FIRST_WAIT_MS);
    clock.advance(1000);
    expect(await declare("r2")).toBe(NOT_FOUND_FIRST_WAIT_MS);
  });
});
