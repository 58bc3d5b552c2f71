import { afterEach, describe, expect, it } from "vitest";
import { QUEUE_DECLARER } from "../../src/core/declarations";
import { MAX_DECLARATIONS_PER_SCALE_SET } from "../../src/reconcile/declarationCap";
import { mapLimit } from "../../src/core/retryPolicy";
import { startHarness, type Harness } from "../support/harness";
import { scaleSetRef } from "../support/refs";
import { modelNics, poolsByIpConfig } from "../../sim/wire";
import { poolId, scaleSetId, WIDE_SUBSCRIPTION, wideWorld } from "../../devkit/worlds";

/** A partition grown past the cap: the oldest declarations work, the newest beyond it are refused with the reason. */
describe("declarations per scale set", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it(`applies the oldest ${MAX_DECLARATIONS_PER_SCALE_SET} and refuses the rest, saying why`, async () => {
    const n = MAX_DECLARATIONS_PER_SCALE_SET + 3;
    h = await startHarness({
      sim: { seed: wideWorld({ scaleSets: 1, capacity: 0, pools: n }) },
      env: { POOLSYNC_SCOPES: `/subscriptions/${WIDE_SUBSCRIPTION}` },
    });
    const vmss = scaleSetId(WIDE_SUBSCRIPTION, "wide", "vmss-0");
    const ref = scaleSetRef(vmss);
    const t0 = Date.parse("2026-12-01T00:00:00Z");
    await mapLimit(
      Array.from({ length: n }, (_, i) => i),
      16,
      async (i) => {
        const declaredAt = new Date(t0 + i * 1000).toISOString();
        await h!.services.declarations.upsert(ref, {
          scaleSetId: vmss,
          backendPoolId: poolId(WIDE_SUBSCRIPTION, "wide", "lb", `pool-${i}`),
          ipConfiguration: "",
          state: "present",
          declaredAt,
          requestId: `r-${i}`,
          declaredBy: QUEUE_DECLARER,
        });
      },
    );
    expect(await h.services.reconcile(ref, { reason: "test", attempt: 0 })).toMatchObject({ result: "applied" });
    const rows = await h.services.declarations.listForTarget(ref);
    const refused = rows
      .filter((d) => d.outcome.kind === "refused")
      .map((d) => d.requestId)
      .sort();
    expect(refused).toEqual([`r-${n - 3}`, `r-${n - 2}`, `r-${n - 1}`].sort());
    expect(rows.find((d) => d.requestId === `r-${n - 1}`)?.outcome.reason).toBe(
      `the scale set has more than ${MAX_DECLARATIONS_PER_SCALE_SET} declarations; this is one of the newest`,
    );
    expect(rows.filter((d) => d.outcome.kind === "applied")).toHaveLength(MAX_DECLARATIONS_PER_SCALE_SET);
    expect(poolsByIpConfig(modelNics(h.sim.control.resource(vmss)!)).ipConfig0).toHaveLength(MAX_DECLARATIONS_PER_SCALE_SET);
  });
});
