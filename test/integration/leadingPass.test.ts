import { afterEach, describe, expect, it } from "vitest";
import { startHarness, type Harness } from "../support/harness";
import { modelNics, poolsByIpConfig } from "../../sim/wire";
import { poolId, scaleSetId, WIDE_SUBSCRIPTION, wideWorld } from "../../devkit/worlds";

const VMSS = scaleSetId(WIDE_SUBSCRIPTION, "wide", "vmss-0");
const POOL = poolId(WIDE_SUBSCRIPTION, "wide", "lb", "pool-0");

describe("a leading declaration starts its pass at once", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  // The gather (the wait for declarations delivered together) set to a minute: a leading pass that waited for it
  // would not finish inside this test's 20 s. It does not wait: a lone change's latency has no gather in it.
  it("a lone declaration on a quiet scale set is written without waiting for the gather", async () => {
    h = await startHarness({
      sim: { seed: wideWorld({ scaleSets: 1, capacity: 2, pools: 1 }) },
      env: {
        POOLSYNC_SCOPES: `/subscriptions/${WIDE_SUBSCRIPTION}`,
        POOLSYNC_DECLARE_WINDOW_SECONDS: "2",
        POOLSYNC_GATHER_MILLISECONDS: "60000",
      },
    });
    await h.send({ v: 1, kind: "declare", scaleSetId: VMSS, backendPoolId: POOL, state: "present" });
    expect(await h.drain()).toMatchObject([
      { result: "reconciled", report: { result: "applied", trigger: expect.stringMatching(/^leading: declare/) } },
    ]);
    const model = h.sim.control.resource(VMSS)!;
    expect([...poolsByIpConfig(modelNics(model)).ipConfig0!]).toEqual([POOL.toLowerCase()]);
    expect(h.sim.control.stats(VMSS).puts + h.sim.control.stats(VMSS).patches).toBe(1);
  }, 20_000);
});
