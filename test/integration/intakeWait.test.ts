import type { PipelinePolicy } from "@azure/core-rest-pipeline";
import { afterEach, describe, expect, it } from "vitest";
import type { Clock } from "../../src/core/ports";
import { manualClock, startHarness, type Harness } from "../support/harness";
import { modelNics, poolsByIpConfig } from "../../sim/wire";
import { poolId, scaleSetId, WIDE_SUBSCRIPTION, wideWorld } from "../../devkit/worlds";
import { INTAKE_DEFER_MAX_MS, INTAKE_DEFER_REASON } from "../../src/reconcile/reconcileRunner";

const VMSS = scaleSetId(WIDE_SUBSCRIPTION, "wide", "vmss-0");
const POOLS = Array.from({ length: 6 }, (_, i) => poolId(WIDE_SUBSCRIPTION, "wide", "lb", `pool-${i}`));
const STORE_DELAY_MS = 1500;

/**
 * Every store of declarations answers late (a transaction naming the targets table: the intake's): declarations stay
 * in hand, being stored, for a while. A pass's own writes of the control row alone (its lease) are not slowed.
 */
function slowMembershipWrites(table: () => string): PipelinePolicy {
  return {
    name: "slow-membership-writes",
    async sendRequest(req, next) {
      const path = new URL(req.url).pathname;
      const batch = path.endsWith("$batch") && typeof req.body === "string" && req.body.includes(`/${table()}`);
      if (req.method !== "GET" && batch) await new Promise((r) => setTimeout(r, STORE_DELAY_MS));
      return next(req);
    },
  };
}

const meta = (id: string) => ({ id, dequeueCount: 1, insertionTime: new Date().toISOString() });

/** One scale set of two instances, declare window on, every write to the memberships table slow. */
async function slowHarness(clock?: Clock): Promise<Harness> {
  let membershipsTable = "";
  const h = await startHarness({
    sim: { seed: wideWorld({ scaleSets: 1, capacity: 2, pools: POOLS.length }) },
    ...(clock ? { clock } : {}),
    env: { POOLSYNC_SCOPES: `/subscriptions/${WIDE_SUBSCRIPTION}`, POOLSYNC_DECLARE_WINDOW_SECONDS: "2" },
    storagePolicies: [slowMembershipWrites(() => membershipsTable)],
  });
  membershipsTable = h.config.membershipsTable;
  return h;
}

/** Six declare messages handled at once: in hand, being stored, until `done`. */
function takeInSix(h: Harness): { done: Promise<unknown>; stored: boolean } {
  const intake = { done: Promise.resolve() as Promise<unknown>, stored: false };
  intake.done = Promise.all(
    POOLS.map((pool, i) =>
      h.services.handleQueueMessage(
        { v: 1, kind: "declare", scaleSetId: VMSS, backendPoolId: pool, state: "present", requestId: `d-${i}` },
        meta(`d-${i}`),
      ),
    ),
  ).then(() => (intake.stored = true));
  return intake;
}

describe("a gathered pass goes back to the queue while its host takes in declarations", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  // A burst's window reconcile reaches a host while that host is still storing declarations of the same scale set
  // (they came to it in the same batches). Read before they are stored, the pass would write without them and leave
  // them to a second window: a second model write for the scale set. Waiting for them inside the invocation held a
  // slot of the queue trigger, and a burst over more scale sets than the trigger's slots then stopped the intake.
  it("a window's reconcile taken while six declarations are being stored returns at once, comes back, and writes all six in one model write", async () => {
    h = await slowHarness();
    const intake = takeInSix(h);
    await new Promise((r) => setTimeout(r, 100));
    const window = await h.services.handleQueueMessage(
      { v: 1, kind: "reconcile", scaleSetId: VMSS, reason: `gathered: declare present ${POOLS[0]}` },
      meta("window"),
    );
    // Back before the declarations are stored: the invocation did not hold its queue slot through the intake.
    expect(intake.stored).toBe(false);
    expect(window).toMatchObject({ result: "reconciled", report: { result: "deferred", reason: INTAKE_DEFER_REASON } });
    expect(h.sim.control.stats(VMSS).gets).toBe(0);
    await intake.done;

    // The pass that came back (and the windows the declarations opened, joined or found nothing left) writes all six.
    const outcomes = await h.drainUntilEmpty(30_000);
    expect(outcomes.some((o) => o.result === "reconciled" && o.report.result === "applied")).toBe(true);
    const model = h.sim.control.resource(VMSS)!;
    expect([...(poolsByIpConfig(modelNics(model)).ipConfig0 ?? [])].sort()).toEqual(
      POOLS.map((p) => p.toLowerCase()).sort(),
    );
    expect(h.sim.control.stats(VMSS).puts).toBe(1);
  }, 60_000);

  it("a host whose intake does not settle runs the pass anyway once it has sent it back for 10 s", async () => {
    const clock = manualClock();
    h = await slowHarness(clock);
    const intake = takeInSix(h);
    await new Promise((r) => setTimeout(r, 100));
    const window = { v: 1, kind: "reconcile", scaleSetId: VMSS, reason: `gathered: declare present ${POOLS[0]}` };
    const first = await h.services.handleQueueMessage(window, meta("window"));
    expect(first).toMatchObject({ report: { result: "deferred", reason: INTAKE_DEFER_REASON } });

    clock.advance(INTAKE_DEFER_MAX_MS);
    const again = await h.services.handleQueueMessage(window, meta("window-again"));
    // Still taking the six in, and the pass ran all the same: a host that never catches up still writes.
    expect(intake.stored).toBe(false);
    // (It read the declarations: none stored yet, so it had nothing to write.)
    expect(again).toMatchObject({ result: "reconciled", report: { result: "no-declarations" } });
    await intake.done;
    // The windows the six opened end on poolsync's clock, which only the test moves.
    clock.advance(2 * 2_000);
    await h.drainUntilEmpty(30_000);
  }, 60_000);
});
